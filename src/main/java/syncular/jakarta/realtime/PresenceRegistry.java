package syncular.jakarta.realtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * §8.6 presence state: in memory only (a restart loses it, §8.6.1), per (partition, scopeKey), one document per
 * session. Callers hold the hub's presence lock; this class is not thread-safe on its own.
 */
final class PresenceRegistry {
    /** partition → scopeKey → session → doc, in join order. */
    private final Map<String, Map<String, Map<RealtimeSession, Map<String, Object>>>> byKey = new HashMap<>();

    /** Stores the session's document; returns true when it is the session's first on the key (join). */
    boolean set(String partition, String scopeKey, RealtimeSession session, Map<String, Object> doc) {
        Map<RealtimeSession, Map<String, Object>> docs = byKey.computeIfAbsent(partition, p -> new HashMap<>())
                .computeIfAbsent(scopeKey, k -> new LinkedHashMap<>());
        return docs.put(session, doc) == null;
    }

    /** Removes the session's document; true when it had one. */
    boolean clear(String partition, String scopeKey, RealtimeSession session) {
        Map<String, Map<RealtimeSession, Map<String, Object>>> keys = byKey.get(partition);
        if (keys == null) return false;
        Map<RealtimeSession, Map<String, Object>> docs = keys.get(scopeKey);
        if (docs == null) return false;
        boolean existed = docs.remove(session) != null;
        if (docs.isEmpty()) keys.remove(scopeKey);
        if (keys.isEmpty()) byKey.remove(partition);
        return existed;
    }

    /** The documents present on a key, except {@code exclude}'s (the §8.6.4 snapshot). */
    List<Map.Entry<RealtimeSession, Map<String, Object>>> snapshot(String partition, String scopeKey,
                                                                   RealtimeSession exclude) {
        Map<RealtimeSession, Map<String, Object>> docs = byKey.getOrDefault(partition, Map.of()).get(scopeKey);
        List<Map.Entry<RealtimeSession, Map<String, Object>>> out = new ArrayList<>();
        if (docs == null) return out;
        for (Map.Entry<RealtimeSession, Map<String, Object>> e : docs.entrySet()) {
            if (e.getKey() != exclude) out.add(Map.entry(e.getKey(), e.getValue()));
        }
        return out;
    }

    /** Every key the session holds a document on. */
    List<String> keysOf(String partition, RealtimeSession session) {
        List<String> keys = new ArrayList<>();
        for (Map.Entry<String, Map<RealtimeSession, Map<String, Object>>> e
                : byKey.getOrDefault(partition, Map.of()).entrySet()) {
            if (e.getValue().containsKey(session)) keys.add(e.getKey());
        }
        return keys;
    }

    void clearAll() { byKey.clear(); }
}

package syncular.jakarta.storage;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** One registered subscription of a client's last pull (SPEC §4.1): id, table and requested scopes. */
public record ClientSubscription(String id, String table, Map<String, List<String>> scopes) {
    public ClientSubscription {
        TreeMap<String, List<String>> copy = new TreeMap<>();
        scopes.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        scopes = Collections.unmodifiableMap(copy);
    }
}

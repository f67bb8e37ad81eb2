package syncular.jakarta.storage;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Effective scopes of a read (SPEC §3.2): a stored scope map matches iff, for every variable here, its stored value
 * is one of the listed values. Variables are kept sorted so the index variable a storage picks is deterministic.
 */
public record ScopeFilter(Map<String, List<String>> values) {
    public ScopeFilter {
        TreeMap<String, List<String>> copy = new TreeMap<>();
        values.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        values = Collections.unmodifiableMap(copy);
    }

    public static ScopeFilter of(String variable, String... values) {
        return new ScopeFilter(Map.of(variable, List.of(values)));
    }

    public boolean isEmpty() { return values.isEmpty(); }

    /** SPEC §3.2: every filtered variable present in the stored map with an allowed value. */
    public boolean matches(Map<String, String> stored) {
        for (Map.Entry<String, List<String>> e : values.entrySet()) {
            String v = stored.get(e.getKey());
            if (v == null || !e.getValue().contains(v)) return false;
        }
        return true;
    }
}

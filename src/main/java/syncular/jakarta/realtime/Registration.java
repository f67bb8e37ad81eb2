package syncular.jakarta.realtime;

import java.util.List;
import java.util.Map;

/** One registered subscription of a connection (§8.1): id, table, and its effective scopes at registration. */
public record Registration(String id, String table, Map<String, List<String>> effective) {
    public Registration {
        effective = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(effective));
    }
}

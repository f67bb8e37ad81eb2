package syncular.jakarta.storage;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The current state of a synced row (SPEC §2.2): its id, server version, stored scope map and the verbatim
 * row-codec payload, the only bytes the serve path sends.
 */
public record StoredRow(String rowId, long serverVersion, Map<String, String> scopes, byte[] payload) {
    public StoredRow {
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(payload, "payload");
        scopes = Collections.unmodifiableMap(new TreeMap<>(scopes));
    }
}

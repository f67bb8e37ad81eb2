package syncular.jakarta.storage;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The current state of a synced row (SPEC §2.2): its id, server version, stored scope map, the verbatim
 * row-codec payload (the only bytes the serve path sends) and its per-column versions ({@link ColumnVersions},
 * written by wire-3 pushes, {@link ColumnVersions#NONE} for every row a wire-1/2 write leaves).
 */
public record StoredRow(String rowId, long serverVersion, Map<String, String> scopes, byte[] payload,
                        ColumnVersions columnVersions) {
    public StoredRow {
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(columnVersions, "columnVersions");
        scopes = Collections.unmodifiableMap(new TreeMap<>(scopes));
    }

    /** A row whose every column is at {@code serverVersion} (what a full-row write leaves, WIRE3-DELTA §8.1). */
    public StoredRow(String rowId, long serverVersion, Map<String, String> scopes, byte[] payload) {
        this(rowId, serverVersion, scopes, payload, ColumnVersions.NONE);
    }
}

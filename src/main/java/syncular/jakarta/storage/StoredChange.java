package syncular.jakarta.storage;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One change of a commit (SPEC §2.2): the row after an upsert ({@code payload}, row-codec bytes) with its
 * {@code rowVersion}, or a delete (both null). {@code scopes} is the stored scope map, variable → value (SPEC §3.1:
 * the row after an upsert, the row before a delete).
 */
public record StoredChange(String table, String rowId, ChangeOp op, Long rowVersion, Map<String, String> scopes,
                           byte[] payload) {
    public StoredChange {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(op, "op");
        scopes = java.util.Collections.unmodifiableMap(new TreeMap<>(scopes));
    }

    public static StoredChange upsert(String table, String rowId, long rowVersion, Map<String, String> scopes,
                                      byte[] payload) {
        return new StoredChange(table, rowId, ChangeOp.UPSERT, rowVersion, scopes, Objects.requireNonNull(payload));
    }

    public static StoredChange delete(String table, String rowId, Map<String, String> scopes) {
        return new StoredChange(table, rowId, ChangeOp.DELETE, null, scopes, null);
    }
}

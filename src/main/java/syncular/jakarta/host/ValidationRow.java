package syncular.jakarta.host;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A row as validators see it (SPEC §6.7, §6.8): decoded values keyed by column name in schema order (string →
 * {@code String}, integer → {@code Long}, float → {@code Double}, boolean → {@code Boolean}, json and blob_ref → the
 * JSON text as {@code String}, bytes/crdt/encrypted → {@code byte[]}, NULL → {@code null}), its server version and
 * its stored scope map.
 */
public record ValidationRow(String rowId, long serverVersion, Map<String, Object> values, Map<String, String> scopes) {
    public ValidationRow {
        Objects.requireNonNull(rowId, "rowId");
        values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        scopes = Collections.unmodifiableMap(new TreeMap<>(scopes));
    }

    /** The value of {@code column}; null for NULL or a column the table does not have. */
    public Object get(String column) { return values.get(column); }
}

package syncular.jakarta.storage;

import java.util.Objects;

/** A row's identity within a partition: its table and row id. */
public record RowKey(String table, String rowId) {
    public RowKey {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
    }
}

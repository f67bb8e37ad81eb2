package syncular.jakarta.storage;

import java.util.Objects;

/** One row write of a commit, applied with the commit by {@link StorageTransaction#applyCommit}. */
public sealed interface RowWrite {
    String table();

    /** The push operation this write belongs to (the {@code opIndex} a constraint violation carries). */
    int opIndex();

    record Upsert(String table, StoredRow row, int opIndex) implements RowWrite {
        public Upsert {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(row, "row");
        }
    }

    record Delete(String table, String rowId, int opIndex) implements RowWrite {
        public Delete {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(rowId, "rowId");
        }
    }
}

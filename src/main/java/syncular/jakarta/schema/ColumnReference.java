package syncular.jakarta.schema;

import java.util.Optional;

/**
 * One declared reference of a child table (SPEC §6.11): {@code column} holds the primary key of a row of
 * {@code parentTable}. The target is always the parent's primary key, so it is not stored. The push pipeline reaches
 * the children of a deleted parent through a non-unique index over {@code column}, which storage creates for every
 * reference of {@link TableSchema#references()}.
 */
public record ColumnReference(String column, String parentTable, OnDelete onDelete) {
    /** What a parent delete does to the rows that reference it (SPEC §6.11). An absent clause means RESTRICT. */
    public enum OnDelete {
        /** The delete is rejected while children remain ({@code sync.reference_violation}, restricted_delete). */
        RESTRICT("RESTRICT"),
        /** Each child is deleted in the same commit, recursively. */
        CASCADE("CASCADE"),
        /** Each child gets an upsert that sets only this column to NULL. */
        SET_NULL("SET NULL");

        private final String schemaName;

        OnDelete(String schemaName) { this.schemaName = schemaName; }

        /** The spelling in a schema file: {@code RESTRICT}, {@code CASCADE} or {@code SET NULL}. */
        public String schemaName() { return schemaName; }

        /** The behaviour of a schema-file spelling; exact case, as the IR writes it. */
        public static Optional<OnDelete> forSchemaName(String name) {
            for (OnDelete d : values()) if (d.schemaName.equals(name)) return Optional.of(d);
            return Optional.empty();
        }
    }
}

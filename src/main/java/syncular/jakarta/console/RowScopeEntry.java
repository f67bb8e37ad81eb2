package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** A stored row's scope values ({@code sync_row_scopes}): what a row inspector shows as its scopes. */
@Entity
@Table(name = "sync_row_scopes")
@IdClass(RowScopeEntry.Key.class)
public class RowScopeEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Id
    @Column(name = "tbl")
    private String table;
    @Id
    @Column(name = "var")
    private String variable;
    @Id
    @Column(name = "value")
    private String value;
    @Id
    @Column(name = "row_id")
    private String rowId;

    public String variable() { return variable; }

    public String value() { return value; }

    /** The composite key. */
    public static class Key implements Serializable {
        private String partition;
        private String table;
        private String variable;
        private String value;
        private String rowId;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && Objects.equals(table, k.table)
                    && Objects.equals(variable, k.variable) && Objects.equals(value, k.value)
                    && Objects.equals(rowId, k.rowId);
        }

        @Override
        public int hashCode() { return Objects.hash(partition, table, variable, value, rowId); }
    }
}

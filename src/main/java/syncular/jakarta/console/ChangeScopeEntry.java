package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** The commit index by scope value ({@code sync_change_scopes}): which commits touched {@code var = value}. */
@Entity
@Table(name = "sync_change_scopes")
@IdClass(ChangeScopeEntry.Key.class)
public class ChangeScopeEntry {
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
    @Column(name = "commit_seq")
    private long commitSeq;

    /** The composite key. */
    public static class Key implements Serializable {
        private String partition;
        private String table;
        private String variable;
        private String value;
        private long commitSeq;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && Objects.equals(table, k.table)
                    && Objects.equals(variable, k.variable) && Objects.equals(value, k.value)
                    && commitSeq == k.commitSeq;
        }

        @Override
        public int hashCode() { return Objects.hash(partition, table, variable, value, commitSeq); }
    }
}

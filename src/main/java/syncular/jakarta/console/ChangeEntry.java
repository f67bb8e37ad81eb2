package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** One change of a commit ({@code sync_changes}): the row it touched, how, and the row version it made. */
@Entity
@Table(name = "sync_changes")
@IdClass(ChangeEntry.Key.class)
public class ChangeEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Id
    @Column(name = "commit_seq")
    private long commitSeq;
    @Id
    @Column(name = "idx")
    private int idx;
    @Column(name = "tbl")
    private String table;
    @Column(name = "row_id")
    private String rowId;
    /** 1 upsert, 2 delete ({@code storage.ChangeOp}). */
    @Column(name = "op")
    private short op;
    @Column(name = "row_version")
    private Long rowVersion;
    /** The change's scope values as the JSON the storage keeps (read as text). */
    @Column(name = "scopes")
    private String scopes;

    public long commitSeq() { return commitSeq; }

    public int idx() { return idx; }

    public String table() { return table; }

    public String rowId() { return rowId; }

    public short op() { return op; }

    public Long rowVersion() { return rowVersion; }

    public String scopes() { return scopes; }

    /** The composite key (partition, commit_seq, idx). */
    public static class Key implements Serializable {
        private String partition;
        private long commitSeq;
        private int idx;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && commitSeq == k.commitSeq
                    && idx == k.idx;
        }

        @Override
        public int hashCode() { return Objects.hash(partition, commitSeq, idx); }
    }
}

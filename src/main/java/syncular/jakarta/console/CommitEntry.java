package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** One commit of a partition's log ({@code sync_commits}, SPEC §4). */
@Entity
@Table(name = "sync_commits")
@IdClass(CommitEntry.Key.class)
public class CommitEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Id
    @Column(name = "commit_seq")
    private long commitSeq;
    @Column(name = "client_id")
    private String clientId;
    @Column(name = "client_commit_id")
    private String clientCommitId;
    @Column(name = "actor_id")
    private String actorId;
    @Column(name = "created_at_ms")
    private long createdAtMs;
    /** RFC 0007: the schema version of the binary that wrote it (null: an old binary). */
    @Column(name = "writer_version")
    private Long writerVersion;

    public String partition() { return partition; }

    public long commitSeq() { return commitSeq; }

    public String clientId() { return clientId; }

    public String clientCommitId() { return clientCommitId; }

    public String actorId() { return actorId; }

    public long createdAtMs() { return createdAtMs; }

    public Long writerVersion() { return writerVersion; }

    /** The composite key (partition, commit_seq). */
    public static class Key implements Serializable {
        private String partition;
        private long commitSeq;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && commitSeq == k.commitSeq;
        }

        @Override
        public int hashCode() { return Objects.hash(partition, commitSeq); }
    }
}

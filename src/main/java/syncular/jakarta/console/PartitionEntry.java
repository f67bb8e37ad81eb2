package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A partition's log head and horizon ({@code sync_partitions}). */
@Entity
@Table(name = "sync_partitions")
public class PartitionEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Column(name = "max_commit_seq")
    private long maxCommitSeq;
    @Column(name = "horizon_seq")
    private long horizonSeq;

    public String partition() { return partition; }

    public long maxCommitSeq() { return maxCommitSeq; }

    public long horizonSeq() { return horizonSeq; }
}

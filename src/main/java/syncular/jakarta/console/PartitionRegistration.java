package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A partition's log epoch and last authentication ({@code sync_partition_registry}, SPEC §2.1). */
@Entity
@Table(name = "sync_partition_registry")
public class PartitionRegistration {
    @Id
    @Column(name = "partition")
    private String partition;
    @Column(name = "log_epoch")
    private String logEpoch;
    @Column(name = "last_authenticated_at_ms")
    private long lastAuthenticatedAtMs;

    public String partition() { return partition; }

    public String logEpoch() { return logEpoch; }

    public long lastAuthenticatedAtMs() { return lastAuthenticatedAtMs; }
}

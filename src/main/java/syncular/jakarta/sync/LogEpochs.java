package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import syncular.jakarta.host.Clock;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.wire.ErrorCode;

/**
 * Log epochs after a backup restore (SPEC §2.1): the restored log went back in time, so clients that saw commits
 * the restore lost must not trust their cursors. A rotation gives a partition a new random epoch, marks it required
 * and deletes its client cursor records, in one transaction; from then on every client's request carries the old
 * epoch and is answered {@code resetRequired} with the new one (a wire 1 client gets {@code sync.invalid_request}),
 * so it resets and replays its outbox. The operator runs it after the restore and before serving traffic
 * (docs/operations.md).
 */
public final class LogEpochs {
    private LogEpochs() { }

    /**
     * Rotates every partition in the registry, or only {@code partition} when it is not null; returns the new
     * entries in registry order. An unknown partition is {@code sync.not_found}: nothing is rotated.
     */
    public static List<PartitionRegistryEntry> rotateAfterRestore(ServerStorage storage, Clock clock,
                                                                  String partition) {
        List<String> targets = new ArrayList<>();
        for (PartitionRegistryEntry e : storage.listPartitionRegistry()) {
            if (partition == null || e.partition().equals(partition)) targets.add(e.partition());
        }
        if (partition != null && targets.isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "no partition " + partition + " in the registry");
        }
        List<PartitionRegistryEntry> rotated = new ArrayList<>();
        for (String p : targets) {
            rotated.add(storage.rotatePartitionLogEpoch(p, UUID.randomUUID().toString(), clock.nowMs()));
        }
        return rotated;
    }
}

package syncular.jakarta.storage;

import java.util.Map;
import java.util.Optional;

/**
 * What {@link StorageSession#preamble} read in one round trip: the registry entry (after the touch), the serve-gate
 * token, the client record, the stored push results by {@code clientCommitId} (absent = not stored; a result that
 * cannot be read is in {@code unreadable}) and the partition's commit-log head and pruning horizon (0 for a
 * partition that has none yet).
 */
public record RequestPreamble(PartitionRegistryEntry registry, ServeGate gate, Optional<ClientRecord> clientRecord,
                              Map<String, StoredPushResult> storedResults, java.util.Set<String> unreadable,
                              long maxCommitSeq, long horizonSeq) {
    public RequestPreamble {
        storedResults = Map.copyOf(storedResults);
        unreadable = java.util.Set.copyOf(unreadable);
    }
}

package syncular.jakarta.storage;

import java.util.Optional;

/**
 * What {@link StorageSession#preamble} read in one round trip: the registry entry (after the touch), the serve-gate
 * token (read for the running schema version {@code gateSchemaVersion}), the client record and the partition's
 * commit-log head and pruning horizon (0 for a partition that has none yet, and 0 when the preamble did not read them).
 */
public record RequestPreamble(PartitionRegistryEntry registry, ServeGate gate, int gateSchemaVersion,
                              Optional<ClientRecord> clientRecord, long maxCommitSeq, long horizonSeq) { }

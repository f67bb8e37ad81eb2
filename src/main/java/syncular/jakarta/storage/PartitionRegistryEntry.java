package syncular.jakarta.storage;

/** A partition's registry row (SPEC §2.1): its log epoch, whether clients must present it, last authentication. */
public record PartitionRegistryEntry(String partition, String logEpoch, boolean epochRequired,
                                     long lastAuthenticatedAtMs) { }

package syncular.jakarta.storage;

/**
 * Prune request (SPEC §4.6): advance the horizon to {@code throughSeq} and delete the log at or below it, only if
 * the partition's log epoch is still {@code logEpoch} (the retention inputs were computed against it).
 */
public record CommitPruneQuery(String logEpoch, long throughSeq) { }

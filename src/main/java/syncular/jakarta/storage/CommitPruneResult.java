package syncular.jakarta.storage;

/** Outcome of a prune: the horizon before and after, and how many commits were removed. */
public record CommitPruneResult(long previousHorizonSeq, long horizonSeq, long removedCommits) { }

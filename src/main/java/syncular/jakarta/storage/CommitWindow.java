package syncular.jakarta.storage;

import java.util.List;

/**
 * What {@link ServerStorage#readCommitWindow} read: the window's commits, and the partition's pruning horizon read
 * right after them in the same round trip (SPEC §4.6). A prune that committed while the window was being read shows
 * in {@code horizonSeq}: when it passed the window's {@code afterSeq}, the window may lack pruned commits and the
 * pull must answer the reset instead (issue 13). {@code horizonSeq} is -1 when no window query ran.
 */
public record CommitWindow(List<StoredCommit> commits, long horizonSeq) {
    public CommitWindow {
        commits = List.copyOf(commits);
    }

    /** Whether a prune may have taken commits out of this window: the horizon is past where it started. */
    public boolean prunedUnder(long afterSeq) { return horizonSeq > afterSeq; }
}

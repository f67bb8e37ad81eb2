package syncular.jakarta.storage;

import java.util.List;
import java.util.Optional;

/**
 * What {@link ServerStorage#readCommitWindow} read: the window's commits, and the partition's pruning horizon read
 * right after them in the same round trip (SPEC §4.6). A prune that committed while the window was being read shows
 * in {@code horizonSeq}: when it passed the window's {@code afterSeq}, the window may lack pruned commits and the
 * pull must answer the reset instead (issue 13). {@code horizonSeq} is -1 when no window query ran.
 *
 * <p>With a {@link RequestEnd} riding on the read: {@code endGate} is the serve gate read after the window's
 * statements, present only when the end's record is now stored (written, or left as an equal one within the touch
 * interval): when the window took one page, which held fewer candidate commits than it may and at most
 * {@code limitChanges - 1} changes of the table, so the window is the rest of the log and no limit cut it (a further
 * page would also have been read after the gate).
 */
public record CommitWindow(List<StoredCommit> commits, long horizonSeq, Optional<ServeGate> endGate) {
    public CommitWindow {
        commits = List.copyOf(commits);
    }

    /** A window read without a request's end on it. */
    public CommitWindow(List<StoredCommit> commits, long horizonSeq) {
        this(commits, horizonSeq, Optional.empty());
    }

    /** Whether a prune may have taken commits out of this window: the horizon is past where it started. */
    public boolean prunedUnder(long afterSeq) { return horizonSeq > afterSeq; }
}

package syncular.jakarta.storage;

import java.util.List;
import java.util.Optional;

/**
 * What {@link ServerStorage#readCommitWindow} read: the window's commits, and the partition's pruning horizon read
 * right after them in the same round trip (SPEC §4.6). A prune that committed while the window was being read shows
 * in {@code horizonSeq}: when it passed the window's {@code afterSeq}, the window may lack pruned commits and the
 * pull must answer the reset instead (issue 13). {@code horizonSeq} is -1 when no window query ran.
 *
 * <p>With a {@link RequestEnd} riding on the read: {@code endGate} is the serve gate read after the window's last
 * statement (empty when the window took more than one page, so the gate would precede a read), and
 * {@code endRecorded} says whether the end's record is now stored (written, or left as an equal one within the touch
 * interval): true exactly when the window's one page held fewer candidate commits than it may and at most
 * {@code limitChanges - 1} changes of the table, so the window is the rest of the log and no limit cut it.
 */
public record CommitWindow(List<StoredCommit> commits, long horizonSeq, Optional<ServeGate> endGate,
                           boolean endRecorded) {
    public CommitWindow {
        commits = List.copyOf(commits);
        if (endRecorded && endGate.isEmpty()) throw new IllegalArgumentException("a recorded end has its gate");
    }

    /** A window read without a request's end on it. */
    public CommitWindow(List<StoredCommit> commits, long horizonSeq) {
        this(commits, horizonSeq, Optional.empty(), false);
    }

    /** Whether a prune may have taken commits out of this window: the horizon is past where it started. */
    public boolean prunedUnder(long afterSeq) { return horizonSeq > afterSeq; }
}

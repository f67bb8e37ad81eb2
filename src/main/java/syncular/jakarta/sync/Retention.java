package syncular.jakarta.sync;

import java.util.Optional;
import syncular.jakarta.storage.ClientCursorInfo;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.CommitPruneResult;
import syncular.jakarta.storage.ServerStorage;

/**
 * Commit-log pruning (SPEC §4.6, REF prune.ts): the horizon never passes the lowest cursor of a client seen within
 * the active window, may be forced past commits older than the force age, always keeps the newest commits, and never
 * moves back. The prune is epoch-checked: a restore that rotated the epoch meanwhile makes it a no-op.
 *
 * @param activeWindowMs     §4.6 normative floor 14 days
 * @param ageForceMs         §4.6 30 days
 * @param minRetainedCommits §4.6 newest 1,000 commits kept
 */
public record Retention(long activeWindowMs, long ageForceMs, long minRetainedCommits) {
    public static final Retention DEFAULTS = new Retention(14L * 24 * 3600 * 1000, 30L * 24 * 3600 * 1000, 1000);

    /**
     * Where a prune at {@code nowMs} would move {@code partition}'s horizon (never backwards): the lowest cursor of a
     * client seen within the active window, unless commits are older than the forced age, and never closer to the
     * head than the retained minimum. What the console recommends, and what {@link #prune} does.
     */
    public long targetHorizon(ServerStorage storage, String partition, long nowMs) {
        return targetAbove(storage, partition, nowMs, storage.getHorizonSeq(partition));
    }

    /** {@link #targetHorizon} for a caller that has read the current horizon already. */
    private long targetAbove(ServerStorage storage, String partition, long nowMs, long current) {
        long maxSeq = storage.getMaxCommitSeq(partition);
        long cursorFloor = Long.MAX_VALUE;
        for (ClientCursorInfo c : storage.listClientCursors(partition)) {
            if (c.updatedAtMs() >= nowMs - activeWindowMs) cursorFloor = Math.min(cursorFloor, c.cursor());
        }
        long forced = storage.getCommitSeqBefore(partition, nowMs - ageForceMs);
        long retainFloor = maxSeq - minRetainedCommits;
        long target = Math.min(Math.max(cursorFloor, forced), retainFloor);
        return Math.max(current, Math.max(0, target));
    }

    /** Prunes {@code partition} at {@code nowMs}: the horizon before and after, and the commits removed. */
    public CommitPruneResult prune(ServerStorage storage, String partition, long nowMs) {
        long current = storage.getHorizonSeq(partition);
        long horizon = targetAbove(storage, partition, nowMs, current);
        CommitPruneResult unchanged = new CommitPruneResult(current, current, 0);
        if (horizon <= current) return unchanged;
        Optional<String> epoch = storage.getPartitionLogEpoch(partition);
        if (epoch.isEmpty()) return unchanged; // never authenticated: nothing of a client's to protect or prune
        return storage.pruneCommitsThrough(partition, new CommitPruneQuery(epoch.get(), horizon));
    }
}

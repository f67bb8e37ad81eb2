package syncular.jakarta.migration;

import java.util.HashMap;
import java.util.Map;

/**
 * How hard a node's backfill may press on live traffic (issue 21). A batch takes its partition's push lock for its
 * writes, so every push that arrives meanwhile waits for the rest of the batch. The pacer watches two things per
 * batch: how long the batch held the lock, and whether anyone else committed in the partition since the previous
 * batch (the commit log's seqs between the backfill's own commits: pushes of this node or any other).
 *
 * <p>While there is traffic, the batch size adapts so that a batch holds the lock at most {@code maxPushWaitMs}:
 * shrunk in proportion when it held longer, grown by a quarter when it held less than 70 % of it. The batch's
 * lock request queues behind the pushes already waiting, so pushes and batches take turns. With no traffic the batch
 * grows back to the configured maximum: a quiet partition backfills at full speed.
 */
final class BackfillPacer {
    /** The smallest batch (unless the maximum is smaller): below it the per-batch overhead dominates. */
    static final int MIN_BATCH = 16;

    private final int maxBatch;
    private final long maxPushWaitNanos;
    private final Map<String, Long> lastOwnSeq = new HashMap<>();
    private int batch;

    BackfillPacer(int maxBatch, long maxPushWaitMs) {
        if (maxBatch < 1) throw new IllegalArgumentException("batch size must be at least 1");
        if (maxPushWaitMs < 1) throw new IllegalArgumentException("the push wait bound is at least 1 ms");
        this.maxBatch = maxBatch;
        this.maxPushWaitNanos = maxPushWaitMs * 1_000_000;
        this.batch = maxBatch;
    }

    /** Source rows the next batch reads. */
    synchronized int batchSize() { return batch; }

    /**
     * A batch of {@code partition} that wrote {@code rows} source rows as its own commit {@code ownSeq} and held the
     * push lock {@code holdNanos}.
     */
    synchronized void observe(String partition, int rows, long ownSeq, long holdNanos) {
        Long previous = lastOwnSeq.put(partition, ownSeq);
        boolean traffic = previous != null && ownSeq - previous > 1;
        if (!traffic) {
            batch = Math.min(maxBatch, Math.max(batch, MIN_BATCH) * 2);
        } else if (holdNanos > maxPushWaitNanos) {
            batch = (int) Math.min(maxBatch, Math.max(MIN_BATCH, (long) rows * maxPushWaitNanos / holdNanos));
        } else if (holdNanos < maxPushWaitNanos * 7 / 10) {
            batch = Math.min(maxBatch, Math.max(rows, MIN_BATCH) * 5 / 4);
        }
    }
}

package syncular.jakarta.migration;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * How hard a node's backfill may press on live traffic (issue 21). A batch takes its partition's push lock for its
 * writes, and its reads and encoding take CPU from the requests the node serves, so pushes slow down while it runs.
 * The pacer sizes the batches against what those pushes feel.
 *
 * <p><b>Latency control</b> (when this node serves pushes): the durations of the pushing requests this node answered
 * ({@link #pushServed}) are collected over a decision window ({@link #DECIDE_EVERY_NANOS}, at least
 * {@link #MIN_SAMPLES} pushes). Their p95 is compared with the target: above it the batch shrinks to 60 %, below 80 %
 * of it the batch grows by a quarter, up to the configured maximum. The target is {@code maxPushP95Ms} when the
 * operator set one; otherwise it is relative, {@link #RELATIVE_TARGET} times the p95 the same pushes have with the
 * backfill paused: every {@link #PROBE_EVERY_NANOS} the drain pauses for {@link #PROBE_NANOS} ({@link #pauseNanos})
 * and the pushes answered meanwhile are the baseline. It is never below the push-wait bound.
 *
 * <p><b>Lock-hold bound</b> (when there is no latency to go by: no target yet, or too few pushes through this node,
 * e.g. the partition's writers use other nodes): whether anyone else committed in the partition since the previous
 * batch (the commit log's seqs between the backfill's own commits) and how long the batch held the lock. While there
 * is traffic a batch holds the lock at most {@code maxPushWaitMs}: shrunk in proportion when it held longer, grown
 * by a quarter when it held less than 70 % of it. With no traffic the batch grows back to the maximum: a quiet
 * partition backfills at full speed.
 */
final class BackfillPacer {
    /** The smallest batch (unless the maximum is smaller): below it the per-batch overhead dominates. */
    static final int MIN_BATCH = 16;
    /** Pushes a decision needs; fewer in a window means too little traffic through this node to go by. */
    static final int MIN_SAMPLES = 12;
    static final long DECIDE_EVERY_NANOS = 250_000_000L;
    static final long PROBE_EVERY_NANOS = 15_000_000_000L;
    static final long PROBE_NANOS = 500_000_000L;
    /** The relative target: the paused p95 times this, under the bound of twice it, with headroom. */
    static final double RELATIVE_TARGET = 1.5;
    private static final int MAX_SAMPLES = 4096;

    private final int maxBatch;
    private final long maxPushWaitNanos;
    private final long fixedTargetNanos;
    private final LongSupplier nanos;
    private final Map<String, Long> lastOwnSeq = new HashMap<>();
    private int batch;

    private long[] window = new long[64];
    private int windowSize;
    private long windowStart;
    private long[] probe = new long[64];
    private int probeSize;
    private long probeUntil;
    /** The paused p95 (0: none measured yet) and when it was probed. */
    private long baselineNanos;
    private long probedAt;
    private boolean probedOnce;

    BackfillPacer(int maxBatch, long maxPushWaitMs, long maxPushP95Ms, LongSupplier nanos) {
        if (maxBatch < 1) throw new IllegalArgumentException("batch size must be at least 1");
        if (maxPushWaitMs < 1) throw new IllegalArgumentException("the push wait bound is at least 1 ms");
        if (maxPushP95Ms < 0) throw new IllegalArgumentException("the push p95 target is at least 0 (relative)");
        this.maxBatch = maxBatch;
        this.maxPushWaitNanos = maxPushWaitMs * 1_000_000;
        this.fixedTargetNanos = maxPushP95Ms * 1_000_000;
        this.nanos = nanos;
        this.batch = maxBatch;
        this.windowStart = nanos.getAsLong();
    }

    /** Source rows the next batch reads. */
    synchronized int batchSize() { return batch; }

    /** A pushing request this node answered, and how long it took. */
    synchronized void pushServed(long durationNanos) {
        if (nanos.getAsLong() < probeUntil) {
            if (probeSize < MAX_SAMPLES) {
                if (probeSize == probe.length) probe = Arrays.copyOf(probe, probeSize * 2);
                probe[probeSize++] = durationNanos;
            }
        } else if (windowSize < MAX_SAMPLES) {
            if (windowSize == window.length) window = Arrays.copyOf(window, windowSize * 2);
            window[windowSize++] = durationNanos;
        }
    }

    /**
     * How long the drain should pause before its next batch: a probe of the pushes' paused latency when the
     * relative target needs one (none yet, or older than {@link #PROBE_EVERY_NANOS}) and this node serves pushes;
     * else 0.
     */
    synchronized long pauseNanos() {
        long now = nanos.getAsLong();
        finishProbe(now);
        if (fixedTargetNanos > 0 || now < probeUntil || windowSize == 0) return 0;
        if (probedOnce && now - probedAt < PROBE_EVERY_NANOS) return 0;
        probeUntil = now + PROBE_NANOS;
        probeSize = 0;
        return PROBE_NANOS;
    }

    /** The p95 target the latency control steers to; 0 while there is none (relative, not probed yet). */
    synchronized long targetNanos() {
        if (fixedTargetNanos > 0) return Math.max(fixedTargetNanos, maxPushWaitNanos);
        return baselineNanos == 0 ? 0 : Math.max((long) (baselineNanos * RELATIVE_TARGET), maxPushWaitNanos);
    }

    /**
     * A batch of {@code partition} that wrote {@code rows} source rows as its own commit {@code ownSeq} and held the
     * push lock {@code holdNanos}.
     */
    synchronized void observe(String partition, int rows, long ownSeq, long holdNanos) {
        long now = nanos.getAsLong();
        finishProbe(now);
        Long previous = lastOwnSeq.put(partition, ownSeq);
        boolean traffic = previous != null && ownSeq - previous > 1;
        long target = targetNanos();
        if (target > 0 && now - windowStart < DECIDE_EVERY_NANOS && windowSize > 0) return;   // still measuring
        if (target > 0 && windowSize >= MIN_SAMPLES) {
            long p95 = p95(window, windowSize);
            restartWindow(now);
            if (p95 > target) {
                batch = Math.min(maxBatch, Math.max(MIN_BATCH, batch * 6 / 10));
            } else if (p95 < target * 8 / 10) {
                batch = Math.min(maxBatch, Math.max(batch, MIN_BATCH) * 5 / 4);
            }
            return;
        }
        if (now - windowStart >= DECIDE_EVERY_NANOS) restartWindow(now);
        if (!traffic) {
            batch = Math.min(maxBatch, Math.max(batch, MIN_BATCH) * 2);
        } else if (holdNanos > maxPushWaitNanos) {
            batch = (int) Math.min(maxBatch, Math.max(MIN_BATCH, (long) rows * maxPushWaitNanos / holdNanos));
        } else if (holdNanos < maxPushWaitNanos * 7 / 10) {
            batch = Math.min(maxBatch, Math.max(rows, MIN_BATCH) * 5 / 4);
        }
    }

    private void restartWindow(long now) {
        windowSize = 0;
        windowStart = now;
    }

    /** A probe that has ended becomes the baseline when enough pushes were answered during it. */
    private void finishProbe(long now) {
        if (probeUntil == 0 || now < probeUntil) return;
        if (probeSize >= MIN_SAMPLES) baselineNanos = p95(probe, probeSize);
        probedAt = now;
        probedOnce = true;
        probeUntil = 0;
        probeSize = 0;
        restartWindow(now);   // what was measured before the probe predates it
    }

    private static long p95(long[] values, int n) {
        long[] sorted = Arrays.copyOf(values, n);
        Arrays.sort(sorted);
        return sorted[Math.min(n - 1, (int) Math.ceil(n * 0.95) - 1)];
    }
}

package syncular.jakarta.migration;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * How hard a node's backfill may press on live traffic (issue 21). A batch takes its partition's push lock for its
 * writes, and its reads and encoding take CPU from the requests the node serves, so pushes slow down while it runs.
 * Two knobs, one per cause: the batch size bounds how long a batch holds the lock, and a pause between batches
 * bounds the share of the CPU the backfill takes.
 *
 * <p><b>Lock-hold bound</b> (the batch size): whether anyone else committed in the partition since the previous batch
 * (the commit log's seqs between the backfill's own commits) and how long the batch held the lock. A hold has a fixed
 * part, the under-lock round trips of the push every batch is (the same ones every push pays), and a part that grows
 * with its rows. While there is traffic the rows' part is at most {@code maxPushWaitMs}: the batch shrinks in
 * proportion when it was longer, and grows by a quarter when it was under 70 % of it. The fixed part
 * ({@link #fixedHoldNanos}) is the intercept of a least-squares line through the last {@link #HOLD_FIT} batches'
 * (rows, hold), never above their shortest hold. Bounding the whole hold instead pinned the batch at its floor once
 * the fixed part alone exceeded the bound (about 5 ms on two busy cores), where the most batches pay it most often
 * (the 1,000,000-row rolling upgrade of 2026-12-04 ran 16-73-row batches). With no traffic the batch grows back to
 * the maximum: a quiet partition backfills at full speed.
 *
 * <p><b>Latency control</b> (the pause, when this node serves pushes): the durations of the pushing requests this node
 * answered ({@link #pushServed}) are collected over a decision window (at least {@link #DECIDE_EVERY_NANOS} and
 * {@link #DECIDE_SAMPLES} pushes, at most {@link #MAX_WINDOW_NANOS}). Their p95 is compared with the target: above it
 * the pause between batches grows by half (at least {@link #MIN_PACE_NANOS}, at most {@link #MAX_PACE_NANOS}), below
 * 80 % of it the pause shrinks to 70 % and ends below the minimum. A window that ends with fewer than
 * {@link #MIN_SAMPLES} pushes (the writers use other nodes) shrinks it the same way. The sample counts matter: the p95
 * of a dozen pushes is their slowest one, and compared with the p95 of a larger paused sample it was above the target
 * by chance often enough to hold the pause at its maximum while the backfill caused none of the latency (the
 * 1,000,000-row rolling upgrade of 2026-12-03 crawled at 20-55 rows/s so).
 * Smaller batches would not do this job: a drain that never pauses keeps a core busy whatever its batch size (the
 * 2026-12-02 run of {@code BackfillBench}: batches shrunk to the floor ran at 753 rows/s and the writers' p50 still
 * doubled), while the pause takes the CPU back and keeps each batch's fixed cost spread over many rows. The target is
 * {@code maxPushP95Ms} when the operator set one; otherwise it is relative, {@link #RELATIVE_TARGET} times the p95
 * the same pushes have with the backfill paused: every {@link #PROBE_EVERY_NANOS} the drain pauses for
 * {@link #PROBE_NANOS} ({@link #pauseNanos}), and the pushes answered in its second half are paused samples (those
 * of the first half still queued behind the last batch: a baseline taken from them set the target too high). The
 * baseline is the p95 of the samples of the last {@link #PROBES_POOLED} probes together, so one quarter second of
 * lucky pushes does not set the target alone. It is never below {@link #MIN_RELATIVE_TARGET_NANOS} nor the
 * push-wait bound.
 */
final class BackfillPacer {
    private static final System.Logger LOG = System.getLogger(BackfillPacer.class.getName());
    /** At most one line this often about the latency control's state, while it pauses the drain. */
    static final long REPORT_EVERY_NANOS = 10_000_000_000L;
    /** The smallest batch (unless the maximum is smaller): below it the per-batch overhead dominates. */
    static final int MIN_BATCH = 16;
    /** Pushes a decision needs; fewer in a window means too little traffic through this node to go by. */
    static final int MIN_SAMPLES = 12;
    /** Pushes a decision waits for (up to {@link #MAX_WINDOW_NANOS}): enough that their p95 is not their maximum. */
    static final int DECIDE_SAMPLES = 40;
    static final long DECIDE_EVERY_NANOS = 250_000_000L;
    static final long MAX_WINDOW_NANOS = 2_000_000_000L;
    /** Probes whose paused samples make the baseline together. */
    static final int PROBES_POOLED = 4;
    static final long PROBE_EVERY_NANOS = 15_000_000_000L;
    static final long PROBE_NANOS = 500_000_000L;
    /** The relative target: the paused p95 times this, under the bound of twice it, with headroom. */
    static final double RELATIVE_TARGET = 1.5;
    /**
     * The relative target's floor: a push p95 below 5 ms is under what a client can tell from its network's round
     * trip, and 1.5 times a paused p95 of a millisecond or two would pause the backfill for nobody's benefit.
     */
    static final long MIN_RELATIVE_TARGET_NANOS = 5_000_000L;
    /** The first pause the latency control takes, and the longest. */
    static final long MIN_PACE_NANOS = 2_000_000L;
    static final long MAX_PACE_NANOS = 1_000_000_000L;
    private static final int MAX_SAMPLES = 4096;
    /** Batches under traffic whose (rows, hold) the fixed part of a hold is fitted to. */
    static final int HOLD_FIT = 32;
    /** Fewer of them and the whole hold counts as the rows'. */
    static final int MIN_HOLD_FIT = 8;

    private final int maxBatch;
    private final long maxPushWaitNanos;
    private final long fixedTargetNanos;
    private final LongSupplier nanos;
    private final Map<String, Long> lastOwnSeq = new HashMap<>();
    private int batch;
    /** The latency control's pause between batches (0: none). */
    private long pace;

    private long[] window = new long[64];
    private int windowSize;
    private long windowStart;
    private long[] probe = new long[64];
    private int probeSize;
    private long probeUntil;
    /** The paused samples of the last probes, newest last. */
    private final java.util.ArrayDeque<long[]> pooled = new java.util.ArrayDeque<>();
    /** The paused p95 (0: none measured yet) and when it was probed. */
    private long baselineNanos;
    private long probedAt;
    private boolean probedOnce;
    private long reportedAt;
    private final int[] fitRows = new int[HOLD_FIT];
    private final long[] fitHolds = new long[HOLD_FIT];
    /** Where the next fitted batch goes (wraps), and how many of the slots hold one (at most {@link #HOLD_FIT}). */
    private int fitNext;
    private int fitted;

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
        long now = nanos.getAsLong();
        if (now < probeUntil) {
            // only the probe's second half: the pushes answered first had queued behind the last batch
            if (now >= probeUntil - PROBE_NANOS / 2 && probeSize < MAX_SAMPLES) {
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
     * else the latency control's pause (0 while the pushes are within the target).
     */
    synchronized long pauseNanos() {
        long now = nanos.getAsLong();
        finishProbe(now);
        if (fixedTargetNanos > 0 || now < probeUntil || windowSize == 0) return pace;
        if (probedOnce && now - probedAt < PROBE_EVERY_NANOS) return pace;
        probeUntil = now + PROBE_NANOS;
        probeSize = 0;
        return Math.max(PROBE_NANOS, pace);
    }

    /** The p95 target the latency control steers to; 0 while there is none (relative, not probed yet). */
    synchronized long targetNanos() {
        if (fixedTargetNanos > 0) return Math.max(fixedTargetNanos, maxPushWaitNanos);
        if (baselineNanos == 0) return 0;
        long relative = Math.max((long) (baselineNanos * RELATIVE_TARGET), MIN_RELATIVE_TARGET_NANOS);
        return Math.max(relative, maxPushWaitNanos);
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
        if (!traffic) {
            batch = Math.min(maxBatch, Math.max(batch, MIN_BATCH) * 2);
        } else {
            fitRows[fitNext] = rows;
            fitHolds[fitNext] = holdNanos;
            fitNext = (fitNext + 1) % HOLD_FIT;
            fitted = Math.min(HOLD_FIT, fitted + 1);
            long rowsHold = Math.max(1, holdNanos - fixedHoldNanos());
            if (rowsHold > maxPushWaitNanos) {
                batch = (int) Math.min(maxBatch, Math.max(MIN_BATCH, (long) rows * maxPushWaitNanos / rowsHold));
            } else if (rowsHold < maxPushWaitNanos * 7 / 10) {
                batch = Math.min(maxBatch, Math.max(rows, MIN_BATCH) * 5 / 4);
            }
        }
        long measuring = now - windowStart;
        if (measuring < DECIDE_EVERY_NANOS || (windowSize < DECIDE_SAMPLES && measuring < MAX_WINDOW_NANOS)) return;
        long target = targetNanos();
        boolean measured = target > 0 && windowSize >= MIN_SAMPLES;
        long p95 = measured ? p95(window, windowSize) : 0;   // sorted once per decision
        if (measured && p95 > target) {
            pace = Math.min(MAX_PACE_NANOS, Math.max(MIN_PACE_NANOS, pace * 3 / 2));
        } else if (!measured || p95 < target * 8 / 10) {
            pace = pace * 7 / 10 < MIN_PACE_NANOS ? 0 : pace * 7 / 10;
        }
        if (pace > 0 && now - reportedAt >= REPORT_EVERY_NANOS) {
            reportedAt = now;
            LOG.log(System.Logger.Level.INFO, "backfill pacing: pushes'' p95 {0} ms over {1} pushes against a target "
                    + "of {2} ms (paused p95 {3} ms); pause between batches {4} ms, batch {5} rows (fixed lock hold "
                    + "{6} ms)",
                    p95 / 1e6, windowSize, target / 1e6, baselineNanos / 1e6, pace / 1e6, batch,
                    fixedHoldNanos() / 1e6);
        }
        restartWindow(now);
    }

    /**
     * The part of a batch's lock hold that does not grow with its rows: the intercept of the least-squares line
     * through the last {@link #HOLD_FIT} batches under traffic, between 0 and their shortest hold. When their sizes
     * barely differ, or the holds do not grow with the rows, all of the shortest hold counts as fixed (growing the
     * batch then spreads the sizes the line needs); 0 until {@link #MIN_HOLD_FIT} batches were seen.
     */
    synchronized long fixedHoldNanos() {
        int n = fitted;
        if (n < MIN_HOLD_FIT) return 0;
        double meanRows = 0;
        double meanHold = 0;
        long shortest = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            meanRows += fitRows[i];
            meanHold += fitHolds[i];
            shortest = Math.min(shortest, fitHolds[i]);
        }
        meanRows /= n;
        meanHold /= n;
        double sxx = 0;
        double sxy = 0;
        for (int i = 0; i < n; i++) {
            double dx = fitRows[i] - meanRows;
            sxx += dx * dx;
            sxy += dx * (fitHolds[i] - meanHold);
        }
        // sizes within about two rows of each other, or a line that falls: no slope to go by
        if (sxx < 4.0 * n || sxy <= 0) return shortest;
        double intercept = meanHold - sxy / sxx * meanRows;
        return (long) Math.max(0, Math.min(shortest, intercept));
    }

    private void restartWindow(long now) {
        windowSize = 0;
        windowStart = now;
    }

    /**
     * A probe that has ended joins the pool of paused samples, whose p95 becomes the baseline once it holds enough
     * pushes.
     */
    private void finishProbe(long now) {
        if (probeUntil == 0 || now < probeUntil) return;
        pooled.addLast(Arrays.copyOf(probe, probeSize));
        if (pooled.size() > PROBES_POOLED) pooled.removeFirst();
        long[] all = pooled.stream().flatMapToLong(Arrays::stream).toArray();
        if (all.length >= MIN_SAMPLES) baselineNanos = p95(all, all.length);
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

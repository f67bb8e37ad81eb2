package syncular.jakarta.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 21: pauses between batches paced to the p95 of the node's pushes against a target (fixed, or relative to a
 * probe with the backfill paused); batches sized to the push-wait bound while others commit, full size on a quiet
 * partition.
 */
class BackfillPacerTest {
    private static final long MS = 1_000_000;
    /** The pacer's clock, moved by the tests. */
    private final AtomicLong now = new AtomicLong(1_000 * MS);

    /** A pacer without a latency target of its own that sees no pushes of this node: the lock-hold bound alone. */
    private BackfillPacer holdOnly(int maxBatch, long maxPushWaitMs) {
        return new BackfillPacer(maxBatch, maxPushWaitMs, 0, now::get);
    }

    private void pushes(BackfillPacer pacer, int n, long eachNanos) {
        for (int i = 0; i < n; i++) pacer.pushServed(eachNanos);
    }

    @Test
    void aFixedTargetLengthensThePauseWhileThePushesP95IsAboveItAndShortensItBackBelow() {
        BackfillPacer pacer = new BackfillPacer(500, 5, 20, now::get);
        assertEquals(0, pacer.pauseNanos(), "a fixed target needs no probe, and nothing is slow yet");
        pacer.observe("p", 500, 10, MS);
        pushes(pacer, 40, 40 * MS);
        now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
        pacer.observe("p", 500, 12, MS);   // a short hold under traffic: the batch grows no further than the maximum
        assertEquals(BackfillPacer.MIN_PACE_NANOS, pacer.pauseNanos(), "p95 40 ms over a 20 ms target: pause");
        assertEquals(500, pacer.batchSize(), "the latency moves the pause, not the batch");

        pushes(pacer, 40, 30 * MS);
        pacer.observe("p", 500, 14, MS);
        assertEquals(BackfillPacer.MIN_PACE_NANOS, pacer.pauseNanos(), "within the decision window: still measuring");
        now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
        pacer.observe("p", 500, 16, MS);
        assertEquals(3 * MS, pacer.pauseNanos(), "still over: half as long again");
        for (int i = 0; i < 30; i++) {
            pushes(pacer, 40, 30 * MS);
            now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
            pacer.observe("p", 500, 18 + 2L * i, MS);
        }
        assertEquals(BackfillPacer.MAX_PACE_NANOS, pacer.pauseNanos(), "never longer than the cap");

        pushes(pacer, 40, 18 * MS);
        now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
        pacer.observe("p", 500, 100, MS);
        assertEquals(BackfillPacer.MAX_PACE_NANOS, pacer.pauseNanos(), "between 80 % and the target: kept");

        pushes(pacer, 40, 5 * MS);
        now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
        pacer.observe("p", 500, 102, 50 * MS);
        assertEquals(700 * MS, pacer.pauseNanos(), "p95 5 ms, under 80 % of the target: to 70 %");
        assertEquals(51, pacer.batchSize(), "the hold bound still sizes the batch: 500 rows held 50 ms, 1 ms of it "
                + "fixed (the earlier batches' shortest hold, all of one size)");
        for (int i = 0; i < 20; i++) {
            now.addAndGet(BackfillPacer.MAX_WINDOW_NANOS);   // no pushes through this node: nobody to slow down
            pacer.observe("p", 50, 104 + 2L * i, MS);
        }
        assertEquals(0, pacer.pauseNanos(), "below the first pause it ends");
    }

    @Test
    void theRelativeTargetComesFromAProbeWithTheBackfillPausedAndIsRenewed() {
        BackfillPacer pacer = new BackfillPacer(500, 5, 0, now::get);
        assertEquals(0, pacer.pauseNanos(), "no pushes through this node: nothing to probe");
        pushes(pacer, 5, 30 * MS);
        assertEquals(BackfillPacer.PROBE_NANOS, pacer.pauseNanos(), "pushes seen: pause and measure them");
        assertEquals(0, pacer.pauseNanos(), "one probe at a time");
        pushes(pacer, 40, 90 * MS);   // answered first: they queued behind the last batch, not part of the baseline
        now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
        pushes(pacer, 40, 10 * MS);   // answered in the second half of the pause
        now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
        assertEquals(0, pacer.pauseNanos(), "probed just now");
        assertEquals(15 * MS, pacer.targetNanos(), "1.5 times the paused p95 of 10 ms");

        pushes(pacer, 40, 25 * MS);
        now.addAndGet(BackfillPacer.DECIDE_EVERY_NANOS);
        pacer.observe("p", 500, 3, MS);
        assertEquals(BackfillPacer.MIN_PACE_NANOS, pacer.pauseNanos(), "25 ms is over 15: pause");

        for (int probe = 1; probe <= BackfillPacer.PROBES_POOLED; probe++) {
            now.addAndGet(BackfillPacer.PROBE_EVERY_NANOS);
            pushes(pacer, 1, 25 * MS);
            assertEquals(BackfillPacer.PROBE_NANOS, pacer.pauseNanos(), "the baseline is renewed");
            now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
            pushes(pacer, 40, 2 * MS);
            now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
            pacer.pauseNanos();
            if (probe < BackfillPacer.PROBES_POOLED) {
                assertEquals(15 * MS, pacer.targetNanos(), "the first probe's pushes are still in the pool");
            }
        }
        assertEquals(5 * MS, pacer.targetNanos(), "never below 5 ms (1.5 x 2 ms = 3 ms)");
    }

    @Test
    void theRelativeTargetsFloorIsFiveMillisecondsWhateverTheHoldBoundUnlessTheBoundIsLonger() {
        for (long[] c : new long[][] {{2, 5}, {5, 5}, {8, 8}}) {   // push-wait bound ms, target ms for a 2 ms p95
            BackfillPacer pacer = new BackfillPacer(500, c[0], 0, now::get);
            pushes(pacer, 1, 2 * MS);
            assertEquals(BackfillPacer.PROBE_NANOS, pacer.pauseNanos());
            now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
            pushes(pacer, 40, 2 * MS);
            now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
            pacer.pauseNanos();
            assertEquals(c[1] * MS, pacer.targetNanos(), "bound " + c[0] + " ms");
        }
    }

    @Test
    void tooFewPushesInAProbeKeepTheTargetUnknownAndTheHoldBoundGoverns() {
        BackfillPacer pacer = new BackfillPacer(500, 5, 0, now::get);
        pushes(pacer, 1, 30 * MS);
        assertEquals(BackfillPacer.PROBE_NANOS, pacer.pauseNanos());
        now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
        pushes(pacer, BackfillPacer.MIN_SAMPLES - 1, 10 * MS);
        now.addAndGet(BackfillPacer.PROBE_NANOS / 2);
        assertEquals(0, pacer.pauseNanos());
        assertEquals(0, pacer.targetNanos(), "a probe of too few pushes sets no baseline");
        pacer.observe("p", 500, 10, 20 * MS);
        pacer.observe("p", 500, 14, 20 * MS);
        assertEquals(125, pacer.batchSize(), "the hold bound: 500 rows held 20 ms, so 125 hold about 5");
    }

    @Test
    void aQuietPartitionKeepsTheFullBatchHoweverLongItHolds() {
        BackfillPacer pacer = holdOnly(500, 5);
        assertEquals(500, pacer.batchSize());
        pacer.observe("p", 500, 10, 40 * MS);   // the first batch has nothing to compare with
        pacer.observe("p", 500, 11, 40 * MS);   // consecutive own commits: nobody else pushed
        assertEquals(500, pacer.batchSize(), "a long hold does not matter when nobody waits");
    }

    @Test
    void underTrafficTheBatchShrinksToTheBoundAndGrowsBackWhenItHoldsLess() {
        BackfillPacer pacer = holdOnly(500, 5);
        pacer.observe("p", 500, 10, 20 * MS);
        pacer.observe("p", 500, 14, 20 * MS);   // three commits of others in between
        assertEquals(125, pacer.batchSize(), "500 rows held 20 ms: 125 rows hold about 5");

        pacer.observe("p", 125, 16, 3 * MS);   // well under the bound: grow by a quarter
        assertEquals(156, pacer.batchSize());
        pacer.observe("p", 156, 18, 4 * MS);   // between 70 % and the bound: keep
        assertEquals(156, pacer.batchSize());
    }

    @Test
    void theBatchNeverShrinksBelowTheFloorNorGrowsPastTheMaximum() {
        BackfillPacer pacer = holdOnly(200, 1);
        pacer.observe("p", 200, 1, 500 * MS);
        pacer.observe("p", 200, 5, 500 * MS);
        assertEquals(BackfillPacer.MIN_BATCH, pacer.batchSize());
        for (long seq = 7; seq < 40; seq += 2) pacer.observe("p", pacer.batchSize(), seq, MS / 10);
        assertEquals(200, pacer.batchSize());
    }

    @Test
    void aMaximumBelowTheFloorIsStillTheMaximum() {
        BackfillPacer pacer = holdOnly(10, 5);
        pacer.observe("p", 10, 1, 50 * MS);
        pacer.observe("p", 10, 3, 50 * MS);
        assertEquals(10, pacer.batchSize());
    }

    @Test
    void trafficStopsBeingSeenOnceOnlyTheBackfillCommitsAndPartitionsAreApart() {
        BackfillPacer pacer = holdOnly(500, 5);
        pacer.observe("a", 500, 1, 20 * MS);
        pacer.observe("b", 500, 2, 20 * MS);   // another partition's seqs are its own
        assertEquals(500, pacer.batchSize(), "seq 2 of b is no gap after seq 1 of a");
        pacer.observe("a", 500, 9, 20 * MS);
        assertEquals(125, pacer.batchSize(), "seven commits of others in a");
        pacer.observe("a", 125, 10, 20 * MS);
        assertEquals(250, pacer.batchSize(), "quiet again: back towards the full batch, doubling");
    }

    /**
     * The 1,000,000-row rolling upgrade of 2026-12-04: a batch's hold has a fixed part (the push's own under-lock
     * round trips) that alone exceeded the 5 ms bound, and bounding the whole hold kept the batches at 16-73 rows.
     * Simulated: a hold of 6 ms plus 0.02 ms a row, with up to 1 ms of noise; only the rows' part is bounded, so the
     * batch settles where its rows hold 3.5-5 ms (175-250 rows), not at the floor.
     */
    @Test
    void aFixedPartOfTheHoldAboveTheBoundDoesNotPinTheBatchAtTheFloor() {
        BackfillPacer pacer = holdOnly(500, 5);
        java.util.Random random = new java.util.Random(4);
        long seq = 1;
        int smallest = Integer.MAX_VALUE;
        for (int i = 0; i < 400; i++) {
            int rows = pacer.batchSize();
            if (i >= 100) smallest = Math.min(smallest, rows);
            long hold = 6 * MS + rows * MS / 50 + (long) (random.nextDouble() * MS);
            seq += 3;   // others commit between the batches
            pacer.observe("p", rows, seq, hold);
        }
        assertTrue(pacer.batchSize() >= 150 && pacer.batchSize() <= 260, "settled at " + pacer.batchSize());
        assertTrue(smallest >= 100, "once the fixed part is known the batch stays well off the floor: " + smallest);
        long fixed = pacer.fixedHoldNanos();
        assertTrue(fixed >= 5 * MS && fixed <= 7 * MS, "fitted fixed part " + fixed / 1e6 + " ms of 6-7");
    }

    @Test
    void aHoldThatIsMostlyRowsIsBoundedAsBefore() {
        BackfillPacer pacer = holdOnly(500, 5);
        long seq = 1;
        for (int i = 0; i < 200; i++) {
            int rows = pacer.batchSize();
            seq += 2;
            pacer.observe("p", rows, seq, MS / 2 + rows * MS / 20);   // 0.5 ms fixed, 0.05 ms a row
        }
        assertTrue(pacer.batchSize() >= 65 && pacer.batchSize() <= 100,
                "the rows' 5 ms are 100 rows; settled at " + pacer.batchSize());
    }

    @Test
    void batchesOfOneSizeCountTheirShortestHoldAsFixedAndGrowUntilTheLineShows() {
        BackfillPacer pacer = holdOnly(500, 5);
        assertEquals(0, pacer.fixedHoldNanos(), "nothing seen yet: all of a hold is the rows'");
        long seq = 1;
        pacer.observe("p", BackfillPacer.MIN_BATCH, seq, 9 * MS);   // the first: nothing to compare its seq with
        for (int i = 0; i < BackfillPacer.MIN_HOLD_FIT; i++) {
            seq += 2;
            pacer.observe("p", BackfillPacer.MIN_BATCH, seq, (8 + i % 2) * MS);   // at the floor, 8-9 ms each
        }
        assertEquals(8 * MS, pacer.fixedHoldNanos(), "one size: the shortest hold is the fixed part");
        assertTrue(pacer.batchSize() > BackfillPacer.MIN_BATCH, "the rows' part is under the bound: it grows");
    }

    /**
     * The 1,000,000-row rolling upgrade of 2026-12-03: pushes whose latency the backfill does not cause (the same
     * distribution whether a batch runs or not) held the pause at its 1 s maximum, and the pass crawled at 20-55
     * rows/s. Simulated here: 100 pushes a second with a heavy-tailed latency, 20 ms batches, 15 minutes of drain.
     */
    @Test
    void latencyTheBackfillDoesNotCauseDoesNotKeepItPaused() {
        BackfillPacer pacer = new BackfillPacer(500, 5, 0, now::get);
        java.util.Random random = new java.util.Random(21);
        long end = now.get() + 900_000 * MS;
        long paused = 0;
        long batching = 0;
        long seq = 1;
        long pushDue = now.get();
        while (now.get() < end) {
            long pause = pacer.pauseNanos();
            for (long until = now.get() + pause + 20 * MS; now.get() < until; now.addAndGet(MS)) {
                while (pushDue <= now.get()) {
                    pacer.pushServed((long) (10 * MS * Math.exp(0.6 * random.nextGaussian())));
                    pushDue += 10 * MS;
                }
            }
            paused += pause;
            batching += 20 * MS;
            seq += 3;   // others commit between the batches
            pacer.observe("p", pacer.batchSize(), seq, 4 * MS);
        }
        assertTrue(batching > 4 * paused, "the backfill ran " + batching / MS + " ms and paused " + paused / MS
                + " ms: a latency that pausing does not lower is not the backfill's");
    }

    /**
     * The other side of the same simulation: pushes answered while a batch runs wait for it (30 ms more), so the
     * drain running back to back would keep their p95 far above the paused one. The pause brings it back under twice
     * the paused p95, and the backfill still runs.
     */
    @Test
    void latencyTheBackfillCausesIsHeldUnderTwiceThePausedP95() {
        BackfillPacer pacer = new BackfillPacer(500, 5, 0, now::get);
        java.util.Random random = new java.util.Random(21);
        long start = now.get();
        long end = start + 900_000 * MS;
        long batching = 0;
        long seq = 1;
        long pushDue = now.get();
        long[] late = new long[200_000];
        int lateCount = 0;
        while (now.get() < end) {
            long pause = pacer.pauseNanos();
            long batchFrom = now.get() + pause;
            for (long until = batchFrom + 20 * MS; now.get() < until; now.addAndGet(MS)) {
                while (pushDue <= now.get()) {
                    long latency = (long) (10 * MS * Math.exp(0.6 * random.nextGaussian()));
                    if (now.get() >= batchFrom) latency += 30 * MS;
                    pacer.pushServed(latency);
                    if (now.get() - start > 300_000 * MS && lateCount < late.length) late[lateCount++] = latency;
                    pushDue += 10 * MS;
                }
            }
            batching += 20 * MS;
            seq += 3;
            pacer.observe("p", pacer.batchSize(), seq, 4 * MS);
        }
        long[] sorted = java.util.Arrays.copyOf(late, lateCount);
        java.util.Arrays.sort(sorted);
        long p95 = sorted[(int) (lateCount * 0.95)];
        long pausedP95 = (long) (10 * MS * Math.exp(0.6 * 1.645));
        assertTrue(p95 <= 2 * pausedP95, "p95 " + p95 / MS + " ms against a paused p95 of " + pausedP95 / MS + " ms");
        assertTrue(batching > 10_000 * MS, "the backfill ran " + batching / MS + " ms of 900,000: it still progresses");
    }

    @Test
    void aBoundBelowOneMillisecondOrAnEmptyBatchIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> holdOnly(500, 0));
        assertThrows(IllegalArgumentException.class, () -> holdOnly(0, 5));
        assertThrows(IllegalArgumentException.class, () -> new BackfillPacer(500, 5, -1, now::get));
    }
}

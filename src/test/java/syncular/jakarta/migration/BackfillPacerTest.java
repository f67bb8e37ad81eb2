package syncular.jakarta.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Issue 21: batches sized to the push-wait bound while others commit, full size on a quiet partition. */
class BackfillPacerTest {
    private static final long MS = 1_000_000;

    @Test
    void aQuietPartitionKeepsTheFullBatchHoweverLongItHolds() {
        BackfillPacer pacer = new BackfillPacer(500, 5);
        assertEquals(500, pacer.batchSize());
        pacer.observe("p", 500, 10, 40 * MS);   // the first batch has nothing to compare with
        pacer.observe("p", 500, 11, 40 * MS);   // consecutive own commits: nobody else pushed
        assertEquals(500, pacer.batchSize(), "a long hold does not matter when nobody waits");
    }

    @Test
    void underTrafficTheBatchShrinksToTheBoundAndGrowsBackWhenItHoldsLess() {
        BackfillPacer pacer = new BackfillPacer(500, 5);
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
        BackfillPacer pacer = new BackfillPacer(200, 1);
        pacer.observe("p", 200, 1, 500 * MS);
        pacer.observe("p", 200, 5, 500 * MS);
        assertEquals(BackfillPacer.MIN_BATCH, pacer.batchSize());
        for (long seq = 7; seq < 40; seq += 2) pacer.observe("p", pacer.batchSize(), seq, MS / 10);
        assertEquals(200, pacer.batchSize());
    }

    @Test
    void aMaximumBelowTheFloorIsStillTheMaximum() {
        BackfillPacer pacer = new BackfillPacer(10, 5);
        pacer.observe("p", 10, 1, 50 * MS);
        pacer.observe("p", 10, 3, 50 * MS);
        assertEquals(10, pacer.batchSize());
    }

    @Test
    void trafficStopsBeingSeenOnceOnlyTheBackfillCommitsAndPartitionsAreApart() {
        BackfillPacer pacer = new BackfillPacer(500, 5);
        pacer.observe("a", 500, 1, 20 * MS);
        pacer.observe("b", 500, 2, 20 * MS);   // another partition's seqs are its own
        assertEquals(500, pacer.batchSize(), "seq 2 of b is no gap after seq 1 of a");
        pacer.observe("a", 500, 9, 20 * MS);
        assertEquals(125, pacer.batchSize(), "seven commits of others in a");
        pacer.observe("a", 125, 10, 20 * MS);
        assertEquals(250, pacer.batchSize(), "quiet again: back towards the full batch, doubling");
    }

    @Test
    void aBoundBelowOneMillisecondOrAnEmptyBatchIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new BackfillPacer(500, 0));
        assertThrows(IllegalArgumentException.class, () -> new BackfillPacer(0, 5));
    }
}

package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.storage.SegmentStore;

/** The PostgreSQL segment store (SPEC §5.1, §5.5; seeds/002 publications) on a real database. */
class PostgresSegmentStoreTest {
    static final EmbeddedPostgresSupport.Pool DB = EmbeddedPostgresSupport.newDatabase();
    static final PostgresSegmentStore STORE = new PostgresSegmentStore(DB, 0);

    @AfterAll
    static void close() { DB.close(); }

    static SegmentStore.Key key(String partition, String epoch, String digest, String rowCursor) {
        return new SegmentStore.Key(partition, epoch, "tasks", 1, 1, digest, 10, rowCursor, null);
    }

    @Test
    void contentAddressedBytesArePublishedPerContextAndSelectedWithoutCrossingPartitionsOrEpochs() {
        String p = EmbeddedPostgresSupport.partition("seg");
        byte[] bytes = ("segment " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        assertTrue(id.matches("sha256:[0-9a-f]{64}"));
        STORE.publish(new SegmentStore.Publication(id, key(p, "e1", "d1", null), bytes.length, 3, 1_000, 2_000), bytes);
        STORE.publish(new SegmentStore.Publication(id, key(p, "e1", "d2", null), bytes.length, 3, 1_500, 2_500), bytes);
        // the same context again only extends its own lifetime
        STORE.publish(new SegmentStore.Publication(id, key(p, "e1", "d1", null), bytes.length, 3, 1_600, 3_000), bytes);

        List<SegmentStore.Publication> pubs = STORE.publications(id, p, "e1");
        assertEquals(2, pubs.size());
        assertEquals(3_000, pubs.stream().filter(x -> x.key().scopeDigest().equals("d1")).findFirst().orElseThrow()
                .expiresAtMs());
        assertTrue(STORE.publications(id, p, "e2").isEmpty(), "another log epoch sees nothing");
        assertTrue(STORE.publications(id, p + "-other", "e1").isEmpty(), "another partition sees nothing");
        STORE.publish(new SegmentStore.Publication(id, key(p + "-b", "e9", "d3", null), bytes.length, 3, 1_700, 2_700),
                bytes);
        assertEquals(List.of(p + "-b/d3", p + "/d2", p + "/d1"), STORE.publications(id).stream()
                .map(x -> x.key().partition() + "/" + x.key().scopeDigest()).toList(),
                "the any-partition lookup a signed URL needs: every context, newest first");
        assertArrayEquals(bytes, STORE.bytes(id).orElseThrow());

        assertEquals(id, STORE.find(key(p, "e1", "d2", null), 2_000).orElseThrow().segmentId());
        assertTrue(STORE.find(key(p, "e1", "d2", null), 2_500).isEmpty(), "an expired publication is not reused");
        assertTrue(STORE.find(key(p, "e1", "d2", "row-9"), 2_000).isEmpty(), "cursors are part of the context");
    }

    @Test
    void recentBytesAreServedFromMemoryWithinTheBudgetAndForgottenWhenASweepDeletesSegments() throws Exception {
        PostgresSegmentStore cached = new PostgresSegmentStore(DB, 4_000);
        String p = EmbeddedPostgresSupport.partition("cache");
        byte[][] segments = new byte[3][];
        String[] ids = new String[3];
        for (int i = 0; i < 3; i++) {
            segments[i] = new byte[900];
            java.util.Arrays.fill(segments[i], (byte) i);
            segments[i][0] = (byte) p.hashCode();
            ids[i] = SegmentStore.segmentId(segments[i]);
            cached.publish(new SegmentStore.Publication(ids[i], key(p, "e", "d" + i, null), 900, 1, 0, 100),
                    segments[i]);
        }
        byte[] large = new byte[1_500];   // above a quarter of the budget: never kept
        large[0] = (byte) p.hashCode();
        String largeId = SegmentStore.segmentId(large);
        cached.publish(new SegmentStore.Publication(largeId, key(p, "e", "dl", null), 1_500, 1, 0, 100), large);
        try (var c = DB.getConnection(); var st = c.createStatement()) {
            st.execute("UPDATE sync_segments SET bytes = '\\x00' WHERE segment_id IN ('" + ids[0] + "', '" + ids[1]
                    + "', '" + largeId + "')");
        }
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow(), "the stored bytes, from memory");
        assertArrayEquals(new byte[] {0}, cached.bytes(largeId).orElseThrow(), "a large one is read from the database");
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow());

        // 3 × 900 and then 3 more: the least recently used (1, 2: 0 was just read) go first, within 4,000 bytes
        for (int i = 0; i < 3; i++) {
            byte[] more = new byte[900];
            java.util.Arrays.fill(more, (byte) (10 + i));
            more[0] = (byte) p.hashCode();
            cached.publish(new SegmentStore.Publication(SegmentStore.segmentId(more), key(p, "e", "m" + i, null), 900,
                    1, 0, 100), more);
        }
        assertArrayEquals(new byte[] {0}, cached.bytes(ids[1]).orElseThrow(), "evicted: read from the database again");
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow(), "recently read: still in memory");

        assertTrue(cached.sweepExpired(1_000) > 0);
        assertTrue(cached.bytes(ids[1]).isEmpty(), "a swept segment is gone from memory too");
    }

    @Test
    void sweepingDropsExpiredPublicationsThenSegmentsNothingHolds() {
        String p = EmbeddedPostgresSupport.partition("sweep");
        byte[] a = ("a " + p).getBytes(StandardCharsets.UTF_8);
        byte[] b = ("b " + p).getBytes(StandardCharsets.UTF_8);
        String idA = SegmentStore.segmentId(a);
        String idB = SegmentStore.segmentId(b);
        STORE.publish(new SegmentStore.Publication(idA, key(p, "e", "d", null), a.length, 1, 0, 100), a);
        STORE.publish(new SegmentStore.Publication(idB, key(p, "e", "d", "c"), b.length, 1, 0, 100), b);
        STORE.publish(new SegmentStore.Publication(idB, key(p, "e", "d2", "c"), b.length, 1, 0, 500), b);

        STORE.sweepExpired(200);
        assertTrue(STORE.bytes(idA).isEmpty(), "no publication holds a: its bytes are gone");
        assertTrue(STORE.bytes(idB).isPresent(), "b is still published under d2");
        assertEquals(1, STORE.publications(idB, p, "e").size());
        STORE.sweepExpired(600);
        assertTrue(STORE.bytes(idB).isEmpty());
    }

    @Test
    void anIdThatIsNotTheHashOfTheBytesIsRefused() {
        byte[] bytes = "x".getBytes(StandardCharsets.UTF_8);
        assertThrows(IllegalArgumentException.class, () -> STORE.publish(new SegmentStore.Publication(
                "sha256:" + "0".repeat(64), key("p", "e", "d", null), 1, 1, 0, 1), bytes));
    }
}

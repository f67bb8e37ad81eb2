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
    static final PostgresSegmentStore STORE = new PostgresSegmentStore(DB);

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
        assertArrayEquals(bytes, STORE.bytes(id).orElseThrow());

        assertEquals(id, STORE.find(key(p, "e1", "d2", null), 2_000).orElseThrow().segmentId());
        assertTrue(STORE.find(key(p, "e1", "d2", null), 2_500).isEmpty(), "an expired publication is not reused");
        assertTrue(STORE.find(key(p, "e1", "d2", "row-9"), 2_000).isEmpty(), "cursors are part of the context");
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

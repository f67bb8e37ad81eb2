package syncular.jakarta.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static java.util.concurrent.TimeUnit.SECONDS;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@link SegmentStore} does (SPEC §5.1, §5.5; seeds/002 publications), run against each store by a
 * subclass: content-addressed bytes stored once, one publication per context with its own lifetime, look-ups that
 * never cross partitions or epochs, reuse of exactly one context, the sweep, the memory in front of the store, and
 * concurrent publishers of one segment all landing.
 */
public abstract class SegmentStoreContractTest {
    /** The store under test, shared by the tests of a class (each isolates itself by partition). */
    protected abstract SegmentStore store();

    /** Another instance over the same storage, keeping {@code cacheBytes} of recent segments in memory. */
    protected abstract SegmentStore cachedStore(long cacheBytes);

    /** Replaces a segment's stored bytes with the single byte 0, behind the store's back. */
    protected abstract void overwriteStoredBytes(String segmentId) throws Exception;

    protected static String partition(String label) {
        return label + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    protected static SegmentStore.Key key(String partition, String epoch, String digest, String rowCursor) {
        return new SegmentStore.Key(partition, epoch, "tasks", 1, 1, digest, 10, rowCursor, null);
    }

    @Test
    void contentAddressedBytesArePublishedPerContextAndSelectedWithoutCrossingPartitionsOrEpochs() {
        SegmentStore store = store();
        String p = partition("seg");
        byte[] bytes = ("segment " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        assertTrue(id.matches("sha256:[0-9a-f]{64}"));
        store.publish(new SegmentStore.Publication(id, key(p, "e1", "d1", null), bytes.length, 3, 1_000, 2_000), bytes);
        store.publish(new SegmentStore.Publication(id, key(p, "e1", "d2", null), bytes.length, 3, 1_500, 2_500), bytes);
        // the same context again only extends its own lifetime
        store.publish(new SegmentStore.Publication(id, key(p, "e1", "d1", null), bytes.length, 3, 1_600, 3_000), bytes);

        List<SegmentStore.Publication> pubs = store.publications(id, p, "e1");
        assertEquals(2, pubs.size());
        SegmentStore.Publication d1 = pubs.stream().filter(x -> x.key().scopeDigest().equals("d1")).findFirst()
                .orElseThrow();
        assertEquals(3_000, d1.expiresAtMs());
        assertEquals(1_000, d1.createdAtMs(), "extending keeps the publication's creation");
        assertTrue(store.publications(id, p, "e2").isEmpty(), "another log epoch sees nothing");
        assertTrue(store.publications(id, p + "-other", "e1").isEmpty(), "another partition sees nothing");
        store.publish(new SegmentStore.Publication(id, key(p + "-b", "e9", "d3", null), bytes.length, 3, 1_700, 2_700),
                bytes);
        assertEquals(List.of(p + "-b/d3", p + "/d2", p + "/d1"), store.publications(id).stream()
                .map(x -> x.key().partition() + "/" + x.key().scopeDigest()).toList(),
                "the any-partition lookup a signed URL needs: every context, newest first");
        assertArrayEquals(bytes, store.bytes(id).orElseThrow());

        assertEquals(id, store.find(key(p, "e1", "d2", null), 2_000).orElseThrow().segmentId());
        assertTrue(store.find(key(p, "e1", "d2", null), 2_500).isEmpty(), "an expired publication is not reused");
        assertTrue(store.find(key(p, "e1", "d2", "row-9"), 2_000).isEmpty(), "cursors are part of the context");
        assertTrue(store.find(key(p, "e2", "d2", null), 2_000).isEmpty(), "so is the log epoch");
    }

    @Test
    void aPageIsFoundByItsContextAndWhereItStartsWhereverItEnds() {
        SegmentStore store = store();
        String p = partition("page");
        byte[] bytes = ("page " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        SegmentStore.Key page = new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, "row-3", "row-6");
        store.publish(new SegmentStore.Publication(id, page, bytes.length, 3, 0, 100), bytes);
        assertEquals(page, store.find(page, 50).orElseThrow().key());
        assertEquals(page, store.find(new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, "row-3", null), 50)
                .orElseThrow().key(), "the asker does not know where the page ends; the publication says");
        assertTrue(store.find(new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, "row-2", "row-6"), 50).isEmpty(),
                "where it starts is part of the context");
        assertTrue(store.find(new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, null, "row-6"), 50).isEmpty(),
                "a first page starts nowhere else");
        assertTrue(store.find(new SegmentStore.Key(p, "e", "tasks", 1, 2, "d", 10, "row-3", "row-6"), 50).isEmpty(),
                "the media type is part of the context");
        assertTrue(store.find(new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 11, "row-3", null), 50).isEmpty(),
                "so is the pin");

        // a second page from the same start (another page size) is the newer publication, and the one found
        byte[] longer = ("longer page " + p).getBytes(StandardCharsets.UTF_8);
        SegmentStore.Key longerPage = new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, "row-3", "row-9");
        store.publish(new SegmentStore.Publication(SegmentStore.segmentId(longer), longerPage, longer.length, 6, 10,
                100), longer);
        assertEquals(longerPage, store.find(new SegmentStore.Key(p, "e", "tasks", 1, 1, "d", 10, "row-3", null), 50)
                .orElseThrow().key());
    }

    @Test
    void unknownSegmentsHaveNoPublicationsAndNoBytes() {
        String unknown = "sha256:" + "0".repeat(64);
        assertTrue(store().publications(unknown).isEmpty());
        assertTrue(store().publications(unknown, "p", "e").isEmpty());
        assertTrue(store().bytes(unknown).isEmpty());
    }

    @Test
    void recentBytesAreServedFromMemoryWithinTheBudgetAndForgottenWhenASweepDeletesSegments() throws Exception {
        SegmentStore cached = cachedStore(4_000);
        String p = partition("cache");
        byte[][] segments = new byte[3][];
        String[] ids = new String[3];
        for (int i = 0; i < 3; i++) {
            segments[i] = new byte[900];
            java.util.Arrays.fill(segments[i], (byte) i);
            segments[i][0] = (byte) p.hashCode();
            segments[i][1] = (byte) (p.hashCode() >> 8);
            ids[i] = SegmentStore.segmentId(segments[i]);
            cached.publish(new SegmentStore.Publication(ids[i], key(p, "e", "d" + i, null), 900, 1, 0, 100),
                    segments[i]);
        }
        byte[] large = new byte[1_500];   // above a quarter of the budget: never kept
        large[0] = (byte) p.hashCode();
        large[1] = (byte) (p.hashCode() >> 8);
        String largeId = SegmentStore.segmentId(large);
        cached.publish(new SegmentStore.Publication(largeId, key(p, "e", "dl", null), 1_500, 1, 0, 100), large);
        for (String id : List.of(ids[0], ids[1], largeId)) overwriteStoredBytes(id);
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow(), "the stored bytes, from memory");
        assertArrayEquals(new byte[] {0}, cached.bytes(largeId).orElseThrow(), "a large one is read from the store");
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow());

        // 3 × 900 and then 3 more: the least recently used (1, 2: 0 was just read) go first, within 4,000 bytes
        for (int i = 0; i < 3; i++) {
            byte[] more = new byte[900];
            java.util.Arrays.fill(more, (byte) (10 + i));
            more[0] = (byte) p.hashCode();
            more[1] = (byte) (p.hashCode() >> 8);
            cached.publish(new SegmentStore.Publication(SegmentStore.segmentId(more), key(p, "e", "m" + i, null), 900,
                    1, 0, 100), more);
        }
        assertArrayEquals(new byte[] {0}, cached.bytes(ids[1]).orElseThrow(), "evicted: read from the store again");
        assertArrayEquals(segments[0], cached.bytes(ids[0]).orElseThrow(), "recently read: still in memory");

        assertTrue(cached.sweepExpired(1_000) > 0);
        assertTrue(cached.bytes(ids[1]).isEmpty(), "a swept segment is gone from memory too");
    }

    @Test
    void sweepingDropsExpiredPublicationsThenSegmentsNothingHolds() {
        SegmentStore store = store();
        String p = partition("sweep");
        byte[] a = ("a " + p).getBytes(StandardCharsets.UTF_8);
        byte[] b = ("b " + p).getBytes(StandardCharsets.UTF_8);
        String idA = SegmentStore.segmentId(a);
        String idB = SegmentStore.segmentId(b);
        store.publish(new SegmentStore.Publication(idA, key(p, "e", "d", null), a.length, 1, 0, 100), a);
        store.publish(new SegmentStore.Publication(idB, key(p, "e", "d", "c"), b.length, 1, 0, 100), b);
        store.publish(new SegmentStore.Publication(idB, key(p, "e", "d2", "c"), b.length, 1, 0, 500), b);

        assertTrue(store.sweepExpired(200) >= 1);
        assertTrue(store.bytes(idA).isEmpty(), "no publication holds a: its bytes are gone");
        assertTrue(store.publications(idA).isEmpty());
        assertTrue(store.bytes(idB).isPresent(), "b is still published under d2");
        assertEquals(1, store.publications(idB, p, "e").size());
        assertTrue(store.find(key(p, "e", "d", null), 50).isEmpty(), "a swept context is not reused");
        store.sweepExpired(600);
        assertTrue(store.bytes(idB).isEmpty());

        // published again after the sweep: whole again
        store.publish(new SegmentStore.Publication(idA, key(p, "e", "d", null), a.length, 1, 700, 900), a);
        assertArrayEquals(a, store.bytes(idA).orElseThrow());
        assertEquals(idA, store.find(key(p, "e", "d", null), 800).orElseThrow().segmentId());
    }

    @Test
    void anIdThatIsNotTheHashOfTheBytesIsRefused() {
        byte[] bytes = "x".getBytes(StandardCharsets.UTF_8);
        assertThrows(IllegalArgumentException.class, () -> store().publish(new SegmentStore.Publication(
                "sha256:" + "0".repeat(64), key("p", "e", "d", null), 1, 1, 0, 1), bytes));
        assertTrue(store().bytes("sha256:" + "0".repeat(64)).isEmpty(), "nothing was stored");
    }

    /** Concurrent pulls on one node publishing one segment under their own contexts: no publication is lost. */
    @Test
    @Timeout(60)
    void concurrentPublishersOfOneSegmentAllLand() throws Exception {
        SegmentStore store = store();
        String p = partition("race");
        byte[] bytes = ("raced " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        int writers = 8;
        int each = 5;
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        for (int w = 0; w < writers; w++) {
            int writer = w;
            pool.submit(() -> {
                try {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        store.publish(new SegmentStore.Publication(id, key(p, "e", "d-" + writer + "-" + i, null),
                                bytes.length, 1, 10 + i, 1_000), bytes);
                    }
                } catch (Throwable t) {
                    firstFailure.compareAndSet(null, t);
                }
            });
        }
        start.countDown();
        pool.shutdown();
        assertTrue(pool.awaitTermination(50, SECONDS), "publishers did not finish");
        assertNull(firstFailure.get(), () -> "a publisher failed: " + firstFailure.get());
        assertEquals(writers * each, store.publications(id, p, "e").size());
        // rerun: every context is already there, so nothing is added
        store.publish(new SegmentStore.Publication(id, key(p, "e", "d-0-0", null), bytes.length, 1, 10, 1_000), bytes);
        assertEquals(writers * each, store.publications(id, p, "e").size());
    }
}

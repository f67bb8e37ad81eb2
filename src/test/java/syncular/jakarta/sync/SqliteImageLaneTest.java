package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresSegmentStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * The SQLite-image lane (SPEC §5.3) on PostgreSQL through the handler: which bootstraps get an image (accept bit 2,
 * the start of a table, more than one rows page), what it holds (exactly the bootstrap rows at their versions), the
 * descriptor, reuse across clients and build-once under concurrency, a new image for a new pin, and the rows lane
 * when no image can be built.
 */
class SqliteImageLaneTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final int ROWS_ONLY = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    private static final int WITH_SQLITE = ROWS_ONLY | PullHeader.ACCEPT_SQLITE;
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private static PostgresSegmentStore segments;

    @TempDir
    static Path dir;

    @BeforeAll
    static void database() {
        SegmentsDatabase d = SegmentsDatabase.open(SCHEMA);
        db = d.db();
        storage = d.storage();
        segments = d.segments();
    }

    @AfterAll
    static void close() { db.close(); }

    /** Counts image publications: how many times an image was built and stored. */
    private static class CountingStore implements SegmentStore {
        final AtomicInteger published = new AtomicInteger();

        @Override
        public Publication publish(Publication publication, byte[] bytes) {
            if (publication.key().mediaType() == SegmentRef.MediaType.SQLITE.code()) published.incrementAndGet();
            return segments.publish(publication, bytes);
        }

        @Override
        public Optional<Publication> find(Key key, long nowMs) { return segments.find(key, nowMs); }

        @Override
        public List<Publication> publications(String id, String p, String e) { return segments.publications(id, p, e); }

        @Override
        public List<Publication> publications(String id) { return segments.publications(id); }

        @Override
        public Optional<byte[]> bytes(String segmentId) { return segments.bytes(segmentId); }

        @Override
        public int sweepExpired(long nowMs) { return segments.sweepExpired(nowMs); }
    }

    /** The lane's segment.built / segment.reused events, per test. */
    final List<ServerEvent> published = new java.util.concurrent.CopyOnWriteArrayList<>();

    private SyncHandler handler(SegmentStore store, Path imageDirectory) {
        SqliteImageLane lane = new SqliteImageLane(store, System::currentTimeMillis, 3_600_000, imageDirectory, 2,
                published::add);
        return new SyncHandler(storage, () -> SCHEMA, List::of, identity -> Map.of("project_id", List.of("*")),
                System::currentTimeMillis, SyncSettings.DEFAULTS,
                new SegmentPublishing(store, System::currentTimeMillis, 3_600_000, Optional.of(lane), Optional.empty(),
                        syncular.jakarta.events.ServerEvents.NONE),
                Validation.NONE, Leases.OFF);
    }

    private static void seed(SyncHandler h, Identity actor, String project, int from, int to) {
        SegmentsDatabase.writeTasks(h, SCHEMA, actor, project, from, to);
    }

    private static ResponseMessage pull(SyncHandler h, Identity actor, String client, String project, int accept,
                                        int limitRows, int maxPages, long cursor, String token) {
        List<RequestFrame> frames = List.of(new ReqHeader(client, 1), new PullHeader(0, limitRows, maxPages, accept),
                new Subscription("s", "tasks", Map.of("project_id", List.of(project)), null, cursor, token));
        return h.handle(actor, new RequestMessage(1, frames)).response();
    }

    private static List<ResponseFrame> body(ResponseMessage m) {
        List<ResponseFrame> out = new ArrayList<>();
        boolean in = false;
        for (ResponseFrame f : m.frames()) {
            if (f instanceof SubEnd) break;
            if (in) out.add(f);
            if (f instanceof SubStart) in = true;
        }
        return out;
    }

    private static SubEnd end(ResponseMessage m) {
        return (SubEnd) m.frames().stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow();
    }

    /** The image's data rows as "id|title|done|version", read with the SQLite JDBC driver as a client would. */
    private static List<String> imageRows(byte[] image) throws Exception {
        Path f = Files.write(Files.createTempFile(dir, "served-", ".sqlite"), image);
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + f); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, title, done, _syncular_version FROM tasks ORDER BY id")) {
            while (rs.next()) rows.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getInt(3) + "|" + rs.getLong(4));
        }
        return rows;
    }

    @Test
    void aWholeTableBootstrapIsOneImageOfExactlyItsRowsReusedByTheNextClient() throws Exception {
        CountingStore store = new CountingStore();
        SyncHandler h = handler(store, dir);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("image"));
        seed(h, actor, "p1", 0, 7);
        seed(h, actor, "p1", 3, 4);   // p1-t003 at version 2
        seed(h, actor, "p2", 0, 3);   // another project: outside the subscription's scope
        long pin = maxSeq(h, actor);

        ResponseMessage first = pull(h, actor, "c1", "p1", WITH_SQLITE, 2, 1, -1, null);
        List<ResponseFrame> section = body(first);
        assertEquals(1, section.size(), "one segment covers the table, paging limits aside");
        SegmentRef ref = (SegmentRef) section.get(0);
        assertEquals(SegmentRef.MediaType.SQLITE, ref.mediaType());
        assertEquals(7, ref.rowCount());
        assertEquals(pin, ref.asOfCommitSeq());
        assertNull(ref.rowCursor());
        assertNull(ref.nextRowCursor());
        assertNull(ref.url(), "no signed URLs are configured");
        assertEquals(pin, end(first).nextCursor());
        assertNull(end(first).bootstrapStateJson(), "an image completes the table");
        assertTrue(((SubStart) first.frames().stream().filter(f -> f instanceof SubStart).findFirst().orElseThrow())
                .bootstrap());

        byte[] bytes = segments.bytes(ref.segmentId()).orElseThrow();
        assertEquals(ref.byteLength(), bytes.length);
        assertEquals(ref.segmentId(), SegmentStore.segmentId(bytes), "content-addressed (§5.1)");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            expected.add(String.format("p1-t%03d|title %d|%d|%d", i, i, i % 2 == 0 ? 1 : 0, i == 3 ? 2 : 1));
        }
        assertEquals(expected, imageRows(bytes), "exactly the bootstrap rows, at their server versions");

        ResponseMessage second = pull(h, actor, "c2", "p1", WITH_SQLITE, 2, 1, -1, null);
        assertEquals(ref.segmentId(), ((SegmentRef) body(second).get(0)).segmentId(), "reused, never rebuilt");
        assertEquals(1, store.published.get());
        assertEquals(List.of("segment.built", "segment.reused"), published.stream().map(ServerEvent::type).toList(),
                "the operator sees the build and the reuse");
        assertEquals(List.of(7L, 7L), published.stream().map(e -> e.fields().get("rows")).toList());

        // a new commit moves the pin: a new image at the new pin
        seed(h, actor, "p1", 7, 8);
        SegmentRef later = (SegmentRef) body(pull(h, actor, "c3", "p1", WITH_SQLITE, 2, 1, -1, null)).get(0);
        assertNotEquals(ref.asOfCommitSeq(), later.asOfCommitSeq());
        assertEquals(8, later.rowCount());
        assertEquals(2, store.published.get());
    }

    @Test
    void theRowsLaneServesClientsWithoutBitTwoSmallTablesAndResumesMidTable() {
        SyncHandler h = handler(new CountingStore(), dir);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("rows-lane"));
        seed(h, actor, "p1", 0, 5);

        assertTrue(body(pull(h, actor, "c1", "p1", ROWS_ONLY, 2, 4, -1, null)).stream()
                .allMatch(f -> f instanceof SegmentInline), "without bit 2 only rows segments (§4.2)");
        assertTrue(body(pull(h, actor, "c2", "p1", WITH_SQLITE, 5, 1, -1, null)).stream()
                .allMatch(f -> f instanceof SegmentInline), "a table that fits one rows page stays inline");

        ResponseMessage started = pull(h, actor, "c3", "p1", ROWS_ONLY, 2, 1, -1, null);
        String token = end(started).bootstrapStateJson();
        assertTrue(token != null && token.contains("p1-t001"), "a mid-table token: " + token);
        ResponseMessage resumed = pull(h, actor, "c3", "p1", WITH_SQLITE, 2, 4, end(started).nextCursor(), token);
        List<ResponseFrame> section = body(resumed);
        assertFalse(section.isEmpty());
        assertTrue(section.stream().allMatch(f -> f instanceof SegmentInline), "no lane switch mid-table (§5.3)");
        assertNull(end(resumed).bootstrapStateJson());
        assertEquals(end(started).nextCursor(), end(resumed).nextCursor(), "the same pin");
    }

    @Test
    void concurrentBootstrapsOfOneContextBuildOneImage() throws Exception {
        CountingStore store = new CountingStore();
        SyncHandler h = handler(store, dir);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("image-storm"));
        for (int i = 0; i < 20; i++) seed(h, actor, "p1", i * 500, (i + 1) * 500);
        int clients = 8;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> ids = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                String client = "storm-" + c;
                ids.add(pool.submit(() -> {
                    go.await();
                    return ((SegmentRef) body(pull(h, actor, client, "p1", WITH_SQLITE, 100, 1, -1, null)).get(0))
                            .segmentId();
                }));
            }
            go.countDown();
            List<String> seen = new ArrayList<>();
            for (Future<String> f : ids) seen.add(f.get());
            assertEquals(1, seen.stream().distinct().count(), "every client got the same image: " + seen);
            assertEquals(1, store.published.get(), "built once");
            assertEquals(1, published.stream().filter(e -> e.type().equals("segment.built")).count());
            assertEquals(clients - 1, published.stream().filter(e -> e.type().equals("segment.reused")).count(),
                    "every other client reused it");
            SegmentRef ref = (SegmentRef) body(pull(h, actor, "late", "p1", WITH_SQLITE, 100, 1, -1, null)).get(0);
            assertEquals(10_000, ref.rowCount());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void noRequestHoldsADatabaseConnectionWhileAnImageIsStoredOrWhileItWaitsForAnotherRequestsBuild()
            throws Exception {
        AtomicInteger checkedOut = new AtomicInteger();
        javax.sql.DataSource counting = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {javax.sql.DataSource.class}, (proxy, m, args) -> {
                    if (!m.getName().equals("getConnection")) return m.invoke(db, args);
                    Connection c = (Connection) m.invoke(db, args);
                    checkedOut.incrementAndGet();
                    boolean[] closed = {false};
                    return java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                            new Class<?>[] {Connection.class}, (p2, m2, a2) -> {
                                if (m2.getName().equals("close") && !closed[0]) {
                                    closed[0] = true;
                                    checkedOut.decrementAndGet();
                                }
                                try {
                                    return m2.invoke(c, a2);
                                } catch (java.lang.reflect.InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                });
        PostgresServerStorage counted = new PostgresServerStorage(counting, new JdbcTransactionRunner(counting),
                System::currentTimeMillis);
        CountDownLatch storing = new CountDownLatch(1);
        CountDownLatch stored = new CountDownLatch(1);
        CountingStore store = new CountingStore() {
            @Override
            public Publication publish(Publication publication, byte[] bytes) {
                storing.countDown();
                try {
                    stored.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return super.publish(publication, bytes);
            }
        };
        SqliteImageLane lane = new SqliteImageLane(store, System::currentTimeMillis, 3_600_000, dir, 2,
                syncular.jakarta.events.ServerEvents.NONE);
        SyncHandler h = new SyncHandler(counted, () -> SCHEMA, List::of, identity -> Map.of("project_id", List.of("*")),
                System::currentTimeMillis, SyncSettings.DEFAULTS,
                new SegmentPublishing(store, System::currentTimeMillis, 3_600_000, Optional.of(lane), Optional.empty(),
                        syncular.jakarta.events.ServerEvents.NONE),
                Validation.NONE, Leases.OFF);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("image-connections"));
        seed(h, actor, "p1", 0, 50);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<ResponseMessage> builder = pool.submit(() -> pull(h, actor, "a", "p1", WITH_SQLITE, 10, 1, -1, null));
            assertTrue(storing.await(30, java.util.concurrent.TimeUnit.SECONDS), "the build reached its store");
            assertEquals(0, checkedOut.get(), "the building request holds no connection while its image is stored");
            Thread[] waiter = new Thread[1];
            Future<ResponseMessage> second = pool.submit(() -> {
                waiter[0] = Thread.currentThread();
                return pull(h, actor, "b", "p1", WITH_SQLITE, 10, 1, -1, null);
            });
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!(waiter[0] != null && waiter[0].getState() == Thread.State.WAITING && checkedOut.get() == 0)) {
                assertTrue(System.nanoTime() < deadline, "the second request never waited without a connection: "
                        + checkedOut.get() + " checked out");
                Thread.sleep(5);
            }
            stored.countDown();
            SegmentRef a = (SegmentRef) body(builder.get()).get(0);
            SegmentRef b = (SegmentRef) body(second.get()).get(0);
            assertEquals(a.segmentId(), b.segmentId());
            assertEquals(1, store.published.get());
        } finally {
            stored.countDown();
            pool.shutdownNow();
        }
    }

    @Test
    void whenNoImageCanBeBuiltTheRowsLaneServesTheTable() {
        SyncHandler h = handler(new CountingStore(), dir.resolve("not-a-directory"));
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("no-image"));
        seed(h, actor, "p1", 0, 5);
        ResponseMessage m = pull(h, actor, "c1", "p1", WITH_SQLITE, 2, 4, -1, null);
        List<ResponseFrame> section = body(m);
        assertEquals(3, section.size(), "three rows pages");
        assertTrue(section.stream().allMatch(f -> f instanceof SegmentInline));
        assertNull(end(m).bootstrapStateJson());
    }

    /** The log head, as a bootstrap of an empty scope reports it for its pin. */
    private static long maxSeq(SyncHandler h, Identity actor) {
        ResponseMessage m = pull(h, actor, "probe-" + System.nanoTime(), "none", ROWS_ONLY, 0, 0, -1, null);
        return end(m).nextCursor();
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.CommitFeed;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Rows pages are built once per pin (issue 15). Pages published by reference are reused: a client bootstrapping the
 * pin another client bootstrapped gets the same pages without a row read, as long as a page is what its own request
 * would build (no more rows than it asks for; exactly that many or the rest of the table) and lives for half a
 * segment TTL more. A new pin, a smaller or larger page size, or a page about to expire is built again. Pages sent
 * inline are kept in the node's memory by the same context and sent again as they were.
 */
class RowsPageReuseTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final long TTL_MS = 60_000;
    private static SegmentsDatabase database;

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AtomicInteger scans = new AtomicInteger();
    private final List<ServerEvent> events = new CopyOnWriteArrayList<>();
    private final SyncHandler handler = handler(1);
    private final Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("rows-reuse"));

    @BeforeAll
    static void open() { database = SegmentsDatabase.open(SCHEMA); }

    @AfterAll
    static void close() { database.db().close(); }

    /** Pages up to {@code inlineMaxBytes} go inline (1: every page by reference); the storage counts its row scans. */
    private SyncHandler handler(int inlineMaxBytes) {
        return handler(StorageHooks.around(database.storage(), "scanRows", scans::incrementAndGet, () -> { }),
                inlineMaxBytes);
    }

    private SyncHandler handler(ServerStorage storage, int inlineMaxBytes) {
        SyncSettings settings = new SyncSettings(SyncSettings.DEFAULTS.maxOperationsPerRequest(), inlineMaxBytes,
                SyncSettings.DEFAULTS.maxResponseBytes(), TTL_MS, SyncSettings.DEFAULTS.maxSubscriptionsPerRequest(),
                SyncSettings.DEFAULTS.admission(), SyncSettings.DEFAULTS.maxCascadeOperationsPerCommit(),
                SyncSettings.DEFAULTS.pageCacheBytes(), SyncSettings.DEFAULTS.recentCommitBytes());
        return new SyncHandler(storage, () -> SCHEMA,
                List::of, identity -> Map.of("project_id", List.of("*")), now::get, settings,
                new SegmentPublishing(database.segments(), now::get, TTL_MS, Optional.empty(), Optional.empty(),
                        events::add),
                Validation.NONE, Leases.OFF);
    }

    private void write(String project, int from, int to) { write(handler, project, from, to); }

    private void write(SyncHandler handler, String project, int from, int to) {
        SegmentsDatabase.writeTasks(handler, SCHEMA, actor, project, from, to);
    }

    /**
     * A whole bootstrap of {@code project} from scratch: its page descriptors and inline pages, every page's rows
     * read, and the cursor it ended at (its pin).
     */
    private record Bootstrap(List<SegmentRef> pages, List<byte[]> inlinePages, List<String> rowIds, long cursor) { }

    private Bootstrap bootstrap(String client, String project, int limitRows) {
        return bootstrap(handler, client, project, limitRows);
    }

    /** Pages inline and by reference alike; {@code pages} has the descriptors of those by reference. */
    private Bootstrap bootstrap(SyncHandler handler, String client, String project, int limitRows) {
        List<SegmentRef> pages = new ArrayList<>();
        List<byte[]> inlines = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        long cursor = -1;
        String token = null;
        do {
            List<ResponseFrame> frames = handler.handle(actor, new RequestMessage(1, List.of(
                    new ReqHeader(client, 1),
                    new PullHeader(0, limitRows, 10, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                    new Subscription("s", "tasks", Map.of("project_id", List.of(project)), null, cursor, token))))
                    .response().frames();
            for (ResponseFrame f : frames) {
                if (f instanceof SegmentRef ref) {
                    pages.add(ref);
                    RowsSegment rows = RowsSegmentDecoder.decode(
                            database.segments().bytes(ref.segmentId()).orElseThrow());
                    rows.blocks().forEach(block -> block.forEach(r -> ids.add((String) r.values()[0])));
                } else if (f instanceof SegmentInline inline) {
                    inlines.add(inline.payload());
                    RowsSegmentDecoder.decode(inline.payload()).blocks()
                            .forEach(block -> block.forEach(r -> ids.add((String) r.values()[0])));
                } else if (f instanceof SubEnd end) {
                    cursor = end.nextCursor();
                    token = end.bootstrapStateJson();
                }
            }
        } while (token != null);
        return new Bootstrap(pages, inlines, ids, cursor);
    }

    private List<String> eventTypes() { return events.stream().map(ServerEvent::type).toList(); }

    @Test
    void aSecondClientAtThePinGetsThePagesTheFirstBuiltWithoutReadingRows() {
        write("p1", 0, 25);
        Bootstrap first = bootstrap("c1", "p1", 10);
        assertEquals(List.of(10L, 10L, 5L), first.pages().stream().map(SegmentRef::rowCount).toList());
        assertEquals(3, scans.get(), "the first client's pages are read");
        assertEquals(List.of("segment.built", "segment.built", "segment.built"), eventTypes());

        scans.set(0);
        events.clear();
        Bootstrap second = bootstrap("c2", "p1", 10);
        assertEquals(0, scans.get(), "the second client's pages are the first one's");
        assertEquals(first.pages().stream().map(SegmentRef::segmentId).toList(),
                second.pages().stream().map(SegmentRef::segmentId).toList());
        assertEquals(first.pages().stream().map(SegmentRef::nextRowCursor).toList(),
                second.pages().stream().map(SegmentRef::nextRowCursor).toList());
        assertEquals(first.rowIds(), second.rowIds());
        assertEquals(25, second.rowIds().stream().distinct().count());
        assertEquals(List.of("segment.reused", "segment.reused", "segment.reused"), eventTypes());
        assertEquals("rows", events.get(0).fields().get("mediaType"));

        // a write moves the pin: the next bootstrap is read again, and includes it
        write("p1", 25, 26);
        scans.set(0);
        Bootstrap afterWrite = bootstrap("c3", "p1", 10);
        assertEquals(3, scans.get());
        assertEquals(26, afterWrite.rowIds().size());
        assertNotEquals(first.pages().get(0).asOfCommitSeq(), afterWrite.pages().get(0).asOfCommitSeq());
    }

    @Test
    void aPageIsReusedOnlyWhereTheRequestWouldBuildTheSamePage() {
        write("p2", 0, 25);
        bootstrap("c1", "p2", 10);   // pages [start, t009] [t009, t019] [t019, end]

        scans.set(0);
        Bootstrap smaller = bootstrap("c2", "p2", 5);
        assertEquals(List.of(5L, 5L, 5L, 5L, 5L), smaller.pages().stream().map(SegmentRef::rowCount).toList());
        assertEquals(4, scans.get(), "10-row pages are too large for a client asking for 5; the last page, the rest of "
                + "the table in 5 rows, is what it would build");

        scans.set(0);
        Bootstrap larger = bootstrap("c3", "p2", 20);
        assertEquals(List.of(20L, 5L), larger.pages().stream().map(SegmentRef::rowCount).toList());
        assertEquals(1, scans.get(), "a page of 5 that does not end the table is not what a client asking for 20 "
                + "gets; the last one is");
        assertEquals(25, larger.rowIds().stream().distinct().count());
        assertEquals(25, smaller.rowIds().stream().distinct().count());
    }

    @Test
    void aPageAboutToExpireIsBuiltAgainRatherThanHandedOut() {
        write("p3", 0, 15);
        Bootstrap first = bootstrap("c1", "p3", 10);
        assertEquals(2, first.pages().size());

        now.addAndGet(TTL_MS / 2 - 1);
        scans.set(0);
        bootstrap("c2", "p3", 10);
        assertEquals(0, scans.get(), "half a TTL left: reused");

        now.addAndGet(2);
        scans.set(0);
        events.clear();
        bootstrap("c3", "p3", 10);
        assertEquals(2, scans.get(), "less than half a TTL left: built again");
        assertEquals(List.of("segment.built", "segment.built"), eventTypes());

        scans.set(0);
        bootstrap("c4", "p3", 10);
        assertEquals(0, scans.get(), "the rebuilt pages' publications live a whole TTL again");
    }

    @Test
    void pagesSentInlineAreSentAgainFromMemoryAtThePinAndReadAgainAfterAWrite() {
        SyncHandler inline = handler(SyncSettings.DEFAULTS.inlineSegmentMaxBytes());
        write(inline, "p4", 0, 25);
        Bootstrap first = bootstrap(inline, "c1", "p4", 10);
        assertEquals(3, first.inlinePages().size());
        assertTrue(first.pages().isEmpty());
        assertEquals(3, scans.get());
        assertTrue(events.isEmpty(), "nothing is published");

        scans.set(0);
        Bootstrap second = bootstrap(inline, "c2", "p4", 10);
        assertEquals(0, scans.get(), "the pages come from this node's memory");
        for (int i = 0; i < 3; i++) assertArrayEquals(first.inlinePages().get(i), second.inlinePages().get(i));
        assertEquals(first.rowIds(), second.rowIds());

        scans.set(0);
        Bootstrap otherSize = bootstrap(inline, "c3", "p4", 7);
        assertEquals(4, scans.get(), "another page size is another page");
        assertEquals(25, otherSize.rowIds().stream().distinct().count());

        write(inline, "p4", 25, 26);
        scans.set(0);
        Bootstrap afterWrite = bootstrap(inline, "c4", "p4", 10);
        assertEquals(3, scans.get(), "a new pin is read again");
        assertEquals(26, afterWrite.rowIds().stream().distinct().count());
    }

    /** The last commit {@link #keepTail} gave the handler's recent tail. */
    private long kept;

    /** What the realtime hub does with every commit the feed announces: the handler's recent tail gets it. */
    private void keepTail() {
        PostgresCommitFeed feed = new PostgresCommitFeed(() -> database.db().getConnection(), database.db(), 50, 500);
        while (true) {
            Optional<CommitFeed.CommitRead> read = feed.readCommit(actor.partition(), kept + 1);
            if (read.isEmpty()) return;
            handler.recentCommits().committed(actor.partition(), read.get().logEpoch(), read.get().commit());
            kept++;
        }
    }

    /**
     * Writes elsewhere in the partition move the pin, not the pages (issue 15): while the node's recent tail shows
     * no change of the table in a bootstrap's scopes since the pin its pages were published at, a bootstrap at the
     * newer pin gets those pages, described at its own pin, without a row read, and its rows are the server's. A
     * write in its scopes, or a tail that does not reach back to the pages' pin, has the pages read again.
     */
    @Test
    void writesInOtherScopesMoveThePinButNotThePages() {
        write("p6", 0, 25);
        keepTail();
        Bootstrap first = bootstrap("c1", "p6", 10);
        assertEquals(3, scans.get());

        write("other6", 0, 3);
        keepTail();
        scans.set(0);
        events.clear();
        Bootstrap second = bootstrap("c2", "p6", 10);
        assertEquals(0, scans.get(), "no change in the scopes since the first pin: its pages");
        assertEquals(first.pages().stream().map(SegmentRef::segmentId).toList(),
                second.pages().stream().map(SegmentRef::segmentId).toList());
        assertEquals(List.of("segment.reused", "segment.reused", "segment.reused"), eventTypes());
        assertEquals(kept, second.pages().get(0).asOfCommitSeq(), "described at the request's own pin, the head");
        assertTrue(second.pages().get(0).asOfCommitSeq() > first.pages().get(0).asOfCommitSeq());
        assertEquals(kept, second.cursor());
        assertEquals(List.copyOf(stored("p6").keySet()), second.rowIds());

        write("p6", 25, 26);
        keepTail();
        scans.set(0);
        Bootstrap third = bootstrap("c3", "p6", 10);
        assertEquals(3, scans.get(), "a write in the scopes: read again");
        assertEquals(26, third.rowIds().size());

        write("other6", 3, 4);
        handler.recentCommits().forget(actor.partition());
        scans.set(0);
        bootstrap("c4", "p6", 10);
        assertEquals(3, scans.get(), "a tail that cannot tell: read again");
    }

    /**
     * A storm of clients bootstrapping at once reads each page once on a node (issue 15): the clients that need a page
     * another request is building wait for it without holding a connection, then reuse it.
     */
    @Test
    void clientsThatComeWhileAPageIsBuiltWaitForItAndReuseIt() throws Exception {
        write("p7", 0, 8);   // one page
        CountDownLatch building = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch waiting = new CountDownLatch(2);
        ServerStorage storage = StorageHooks.around(StorageHooks.around(database.storage(), "scanRows", () -> {
            if (scans.getAndIncrement() == 0) {
                building.countDown();
                await(go);
            }
        }, () -> { }), "release", waiting::countDown, () -> { });
        SyncHandler held = handler(storage, 1);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<Bootstrap> first = pool.submit(() -> bootstrap(held, "c1", "p7", 10));
            assertTrue(building.await(30, TimeUnit.SECONDS));
            Future<Bootstrap> second = pool.submit(() -> bootstrap(held, "c2", "p7", 10));
            Future<Bootstrap> third = pool.submit(() -> bootstrap(held, "c3", "p7", 10));
            assertTrue(waiting.await(30, TimeUnit.SECONDS), "both let their connections go and wait for the build");
            go.countDown();
            List<Bootstrap> all = List.of(first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS),
                    third.get(30, TimeUnit.SECONDS));
            assertEquals(1, scans.get(), "the page was read once");
            for (Bootstrap b : all) {
                assertEquals(first.get().pages().get(0).segmentId(), b.pages().get(0).segmentId());
                assertEquals(List.copyOf(stored("p7").keySet()), b.rowIds());
            }
            assertEquals(List.of("segment.built", "segment.reused", "segment.reused"), eventTypes());
        } finally {
            go.countDown();
            pool.shutdownNow();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(30, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A client's replica of one project's rows, by id: their versions (deleted rows are absent). */
    private static final class Replica {
        final String client;
        final Map<String, Long> versions = new java.util.TreeMap<>();
        long cursor = -1;
        String token;

        Replica(String client) { this.client = client; }

        /** One pull of at most one 5-row page or 1,000 changes; applies what it gets; true while bootstrapping. */
        boolean pull(SyncHandler h, Identity actor, String project) {
            List<ResponseFrame> frames = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader(client, 1),
                    new PullHeader(0, 5, 1, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                    new Subscription("s", "tasks", Map.of("project_id", List.of(project)), null, cursor, token))))
                    .response().frames();
            for (ResponseFrame f : frames) {
                if (f instanceof SegmentInline inline) {
                    RowsSegmentDecoder.decode(inline.payload()).blocks().forEach(block -> block.forEach(
                            r -> versions.put((String) r.values()[0], r.serverVersion())));
                } else if (f instanceof syncular.jakarta.wire.CommitFrame commit) {
                    for (syncular.jakarta.wire.CommitFrame.Change c : commit.changes()) {
                        if (c.op() == syncular.jakarta.wire.Op.DELETE) versions.remove(c.rowId());
                        else versions.put(c.rowId(), c.rowVersion());
                    }
                } else if (f instanceof SubEnd end) {
                    cursor = end.nextCursor();
                    token = end.bootstrapStateJson();
                }
            }
            return token != null;
        }
    }

    private Map<String, Long> stored(String project) {
        Map<String, Long> out = new java.util.TreeMap<>();
        syncular.jakarta.storage.Reads.scan(database.storage(), actor.partition(),
                new syncular.jakarta.storage.RowScanQuery("tasks",
                        syncular.jakarta.storage.ScopeFilter.of("project_id", project), null, 10_000))
                .forEach(r -> out.put(r.rowId(), r.serverVersion()));
        return out;
    }

    /**
     * The risk of keeping pages: a client gets a page built for an earlier client at its pin, with rows as they were
     * then, after the rows changed. Its incremental pulls from the pin replay every change since, so every client
     * ends with the server's rows at the server's versions, whichever pages it got from memory.
     */
    @Test
    void clientsThatGetKeptPagesAtAnOldPinConvergeAfterWritesBetweenTheirPages() {
        SyncHandler inline = handler(SyncSettings.DEFAULTS.inlineSegmentMaxBytes());
        write(inline, "p5", 0, 30);
        Replica a = new Replica("a");
        Replica c = new Replica("c");
        a.pull(inline, actor, "p5");
        a.pull(inline, actor, "p5");   // pages 1-2 at the first pin, now kept
        c.pull(inline, actor, "p5");   // the same pin: page 1 from memory

        // rows change in pages already sent, in pages still to come, and a row is deleted and another added
        write(inline, "p5", 2, 4);
        write(inline, "p5", 20, 22);
        inline.handle(actor, new RequestMessage(1, List.of(new ReqHeader("writer", 1), new PushCommit("del-p5",
                List.of(PushCommit.Operation.delete("tasks", "p5-t007", null))))));
        write(inline, "p5", 30, 31);

        scans.set(0);
        c.pull(inline, actor, "p5");   // page 2 at the old pin: from memory, rows as they were before the writes
        assertEquals(0, scans.get(), "the old pin's second page comes from memory");
        while (a.pull(inline, actor, "p5")) { }
        while (c.pull(inline, actor, "p5")) { }
        Replica b = new Replica("b");
        while (b.pull(inline, actor, "p5")) { }
        for (Replica r : List.of(a, b, c)) {
            r.pull(inline, actor, "p5");   // the incremental pull from each one's pin
            assertEquals(stored("p5"), r.versions, "client " + r.client + " converged");
        }
        assertTrue(stored("p5").get("p5-t002") > 1, "the test changed rows");
        assertNull(stored("p5").get("p5-t007"));
    }
}

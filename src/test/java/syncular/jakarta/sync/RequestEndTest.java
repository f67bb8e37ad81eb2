package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 15: a request's end (its client record, then the serve-gate re-read) rides on its last commit-window read
 * ({@link syncular.jakarta.storage.RequestEnd}). The window's statement stores the record of a COMPLETE window; a window
 * that a limit cut ends on its own round trip, and the stored cursor is always the one the response answers. The gate
 * read there still sees what changed before the window was read (RFC 0007 read-verify-refuse).
 */
class RequestEndTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    /** Runs once, inside the next {@code readCommitWindow}, before the window is read. */
    private final AtomicReference<Runnable> beforeWindowRead = new AtomicReference<>();
    /** Requests that ended on their own round trip ({@code recordClientsThenReadGate}) rather than on their window. */
    private final AtomicInteger separateEnds = new AtomicInteger();

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    private SyncHandler handler(long maxResponseBytes) {
        SyncSettings d = SyncSettings.DEFAULTS;
        SyncSettings settings = new SyncSettings(d.maxOperationsPerRequest(), d.inlineSegmentMaxBytes(),
                maxResponseBytes, d.segmentTtlMs(), d.maxSubscriptionsPerRequest(), d.admission(),
                d.maxCascadeOperationsPerCommit(), d.pageCacheBytes(), d.recentCommitBytes());
        ServerStorage hooked = StorageHooks.around(StorageHooks.around(storage, "readCommitWindow",
                StorageHooks.once(beforeWindowRead), () -> { }), "recordClientsThenReadGate",
                separateEnds::incrementAndGet, () -> { });
        return new SyncHandler(hooked, () -> SCHEMA, List::of, identity -> ALL, () -> 1_000L, settings,
                (request, bytes) -> {
                    throw new AssertionError("no segment is published in these tests");
                }, Validation.NONE, Leases.OFF);
    }

    /** Eight commits of one row each into p1 by another client; the reader has pulled through none of them. */
    private static Identity eightCommits(SyncHandler h, String name) {
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition(name));
        for (int i = 1; i <= 8; i++) {
            List<ResponseFrame> r = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("writer", 1),
                    new PushCommit("c" + i, List.of(PushCommit.Operation.upsert("tasks", "t" + i, null,
                            TestSchemas.taskPayload(SCHEMA, "t" + i, "p1", "title " + i, false))))))).response()
                    .frames();
            assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class, r.get(1)).status());
        }
        return actor;
    }

    private static RequestMessage pull(int limitCommits, long cursor) {
        return new RequestMessage(1, List.of(new ReqHeader("reader", 1),
                new PullHeader(limitCommits, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, cursor, null)));
    }

    private static long answeredCursor(List<ResponseFrame> frames) {
        return ((SubEnd) frames.stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow()).nextCursor();
    }

    private static List<Long> commits(List<ResponseFrame> frames) {
        return frames.stream().filter(f -> f instanceof CommitFrame).map(f -> ((CommitFrame) f).commitSeq()).toList();
    }

    @Test
    void aCompleteWindowStoresTheLogHeadAsTheCursor() {
        SyncHandler h = handler(SyncSettings.DEFAULTS.maxResponseBytes());
        Identity actor = eightCommits(h, "end-complete");
        separateEnds.set(0);
        List<ResponseFrame> frames = h.handle(actor, pull(0, 2)).response().frames();
        assertEquals(0, separateEnds.get(), "the request ended on its window read");
        assertEquals(List.of(3L, 4L, 5L, 6L, 7L, 8L), commits(frames));
        assertEquals(8, answeredCursor(frames));
        assertEquals(8, storage.getClientRecord(actor.partition(), "reader").orElseThrow().cursor());
    }

    @Test
    void aWindowCutByTheCommitLimitStoresTheCursorItAnswers() {
        SyncHandler h = handler(SyncSettings.DEFAULTS.maxResponseBytes());
        Identity actor = eightCommits(h, "end-limit");
        separateEnds.set(0);
        List<ResponseFrame> frames = h.handle(actor, pull(2, 2)).response().frames();
        assertEquals(1, separateEnds.get(), "a cut window ends on its own round trip");
        assertEquals(List.of(3L, 4L), commits(frames), "two changes: the limit");
        assertEquals(4, answeredCursor(frames));
        assertEquals(4, storage.getClientRecord(actor.partition(), "reader").orElseThrow().cursor(),
                "not the log head: the window did not reach it");
    }

    /** The statement's guard cannot see the byte budget: it stores the complete window's record, which is replaced. */
    @Test
    void aWindowCutByTheResponseBudgetStoresTheCursorItAnswers() {
        SyncHandler h = handler(600);
        Identity actor = eightCommits(h, "end-budget");
        separateEnds.set(0);
        List<ResponseFrame> frames = h.handle(actor, pull(0, 2)).response().frames();
        assertEquals(1, separateEnds.get(), "a cut window ends on its own round trip");
        List<Long> sent = commits(frames);
        assertTrue(!sent.isEmpty() && sent.size() < 6, "the budget cut the window: " + sent);
        long answered = answeredCursor(frames);
        assertEquals(sent.get(sent.size() - 1), answered);
        assertEquals(answered, storage.getClientRecord(actor.partition(), "reader").orElseThrow().cursor(),
                "the record the window's statement stored (cursor 8) was replaced by the one answered");
    }

    /**
     * Two subscriptions, the first cut by the commit limit: the record the last window's statement stores holds the
     * lowest cursor of the request (the first's), which is the one the response's sections answer.
     */
    @Test
    void theRecordAWindowStoresHoldsTheRequestsLowestCursor() {
        SyncHandler h = handler(SyncSettings.DEFAULTS.maxResponseBytes());
        Identity actor = eightCommits(h, "end-two");
        h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("writer", 1),
                new PushCommit("q1", List.of(PushCommit.Operation.upsert("tasks", "q1", null,
                        TestSchemas.taskPayload(SCHEMA, "q1", "p2", "other project", false)))))));
        separateEnds.set(0);
        List<ResponseFrame> frames = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("reader", 1),
                new PullHeader(2, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("a", "tasks", Map.of("project_id", List.of("p1")), null, 2, null),
                new Subscription("b", "tasks", Map.of("project_id", List.of("p2")), null, 2, null)))).response()
                .frames();
        List<Long> answered = frames.stream().filter(f -> f instanceof SubEnd).map(f -> ((SubEnd) f).nextCursor())
                .toList();
        assertEquals(List.of(4L, 9L), answered, "a: cut after two commits; b: complete through the head");
        assertEquals(4, storage.getClientRecord(actor.partition(), "reader").orElseThrow().cursor());
        assertEquals(0, separateEnds.get(), "stored by the last window's statement, no correction");
    }

    /** RFC 0007: a change of the log epoch (a restore) committed after the preamble, before the window read. */
    @Test
    void theGateReadAfterTheWindowRefusesWhatChangedBeforeIt() {
        SyncHandler h = handler(SyncSettings.DEFAULTS.maxResponseBytes());
        Identity actor = eightCommits(h, "end-gate");
        beforeWindowRead.set(() -> {
            try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "UPDATE sync_partition_registry SET log_epoch = 'restored-epoch' WHERE partition = ?")) {
                ps.setString(1, actor.partition());
                assertEquals(1, ps.executeUpdate());
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        separateEnds.set(0);
        SyncException refused = assertThrows(SyncException.class, () -> h.handle(actor, pull(0, 2)));
        assertEquals(ErrorCode.SYNC_SCHEMA_NOT_READY, refused.code());
        assertEquals(0, separateEnds.get(), "refused by the gate read in the window's round trip");
    }
}

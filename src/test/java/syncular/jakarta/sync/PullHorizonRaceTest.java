package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.CommitPruneQuery;
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
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * A prune racing a pull (issue 13 item 9d, SPEC §4.6), made deterministic with hooks around the real storage's
 * commit-window read: the handler reads the horizon, a retention run prunes and commits, then the window is read (it
 * silently lacks the pruned commits): the horizon the storage reads right after the window, in the same round trip,
 * shows the prune and the subscription answers the reset, never a cursor that skipped commits. A prune after that
 * read finds a window that was whole.
 */
class PullHorizonRaceTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    /** Runs once, inside the next {@code readCommitWindow}, before the window is read. */
    private final AtomicReference<Runnable> beforeWindowRead = new AtomicReference<>();
    /** Runs once, inside the next {@code readCommitWindow}, after the window was read. */
    private final AtomicReference<Runnable> afterWindowRead = new AtomicReference<>();

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    /** The real storage, with hooks around the commit-window read (the points a concurrent prune races). */
    private ServerStorage hooked() {
        return StorageHooks.around(storage, "readCommitWindow", StorageHooks.once(beforeWindowRead),
                StorageHooks.once(afterWindowRead));
    }

    private SyncHandler handler(SyncSettings settings) {
        return new SyncHandler(hooked(), () -> SCHEMA, List::of, identity -> ALL, () -> 1_000L, settings,
                (request, bytes) -> {
                    throw new AssertionError("no segment is published in these tests");
                }, Validation.NONE, Leases.OFF);
    }

    private static PushCommit insert(String commitId, String rowId, String project) {
        return new PushCommit(commitId, List.of(PushCommit.Operation.upsert("tasks", rowId, null,
                TestSchemas.taskPayload(SCHEMA, rowId, project, "title", false))));
    }

    private static PullHeader pullHeader() {
        return new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS);
    }

    @Test
    void aPruneCommittingBeforeTheWindowReadAnswersResetInsteadOfSkippingCommits() {
        String partition = EmbeddedPostgresSupport.partition("race");
        Identity actor = new Identity("actor-1", partition);
        SyncHandler h = handler(SyncSettings.DEFAULTS);
        for (int i = 1; i <= 8; i++) {
            List<ResponseFrame> r = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("writer", 1),
                    insert("c" + i, "t" + i, "p1")))).response().frames();
            assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class, r.get(1)).status());
        }
        String epoch = storage.getPartitionLogEpoch(partition).orElseThrow();
        RequestMessage pull = new RequestMessage(1, List.of(new ReqHeader("reader", 1), pullHeader(),
                new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, 2, null)));

        // the horizon (0) is read, then a retention run prunes through 5 and commits, then the window is read
        beforeWindowRead.set(() -> storage.pruneCommitsThrough(partition, new CommitPruneQuery(epoch, 5)));
        List<ResponseFrame> frames = h.handle(actor, pull).response().frames();
        assertEquals(5, storage.getHorizonSeq(partition), "the prune ran inside the request");
        SubStart start = assertInstanceOf(SubStart.class, frames.get(1));
        assertEquals(SubStart.Status.RESET, start.status(), "§4.6: cursor 2 is now behind the horizon");
        assertEquals(ErrorCode.SYNC_CURSOR_EXPIRED.wire(), start.reasonCode());
        assertFalse(frames.stream().anyMatch(f -> f instanceof CommitFrame), "no commits on a reset");
        assertEquals(2, assertInstanceOf(SubEnd.class, frames.get(2)).nextCursor(), "the request cursor is echoed");
        // the window's statement stored the record of a complete window (cursor 8); the reset replaced it
        assertEquals(-1, storage.getClientRecord(partition, "reader").orElseThrow().cursor(),
                "a reset moves no stored cursor");

        // a prune that commits after the window and its horizon were read: the window was whole when read, so its
        // commits go out and the cursor moves past the new horizon (nothing was skipped; the next pull is normal)
        RequestMessage pullAt5 = new RequestMessage(1, List.of(new ReqHeader("reader", 1), pullHeader(),
                new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, 5, null)));
        afterWindowRead.set(() -> storage.pruneCommitsThrough(partition, new CommitPruneQuery(epoch, 6)));
        List<ResponseFrame> late = h.handle(actor, pullAt5).response().frames();
        assertEquals(6, storage.getHorizonSeq(partition), "the prune ran inside the request");
        assertEquals(SubStart.Status.ACTIVE, assertInstanceOf(SubStart.class, late.get(1)).status());
        assertEquals(List.of(6L, 7L, 8L), late.stream().filter(f -> f instanceof CommitFrame)
                .map(f -> ((CommitFrame) f).commitSeq()).toList());
        assertEquals(8, ((SubEnd) late.stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow()).nextCursor());

        // a cursor at the horizon still pulls incrementally, and sees every commit above it
        List<ResponseFrame> after = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("reader", 1),
                pullHeader(), new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, 6, null))))
                .response().frames();
        assertEquals(SubStart.Status.ACTIVE, assertInstanceOf(SubStart.class, after.get(1)).status());
        assertEquals(List.of(7L, 8L), after.stream().filter(f -> f instanceof CommitFrame)
                .map(f -> ((CommitFrame) f).commitSeq()).toList());
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.migration.BackfillRunner;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Request validation of the real {@link SyncHandler} on embedded PostgreSQL (issue 13): server-owned clientId
 * namespaces are refused, and the subscription count per request is capped.
 */
class SyncHandlerHardeningTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    /** Runs once, inside the next {@code readCommitWindow} (the proof that a request read no log). */
    private final AtomicReference<Runnable> beforeWindowRead = new AtomicReference<>();

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    /** The real storage, with a hook in front of the commit-window read (the point a concurrent prune races). */
    private ServerStorage hooked() {
        return StorageHooks.around(storage, "readCommitWindow", StorageHooks.once(beforeWindowRead), () -> { });
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
    void theBackfillRunnersClientIdNamespaceIsRefusedLikeTheRemoteCommandOne() {
        String partition = EmbeddedPostgresSupport.partition("reserved");
        Identity actor = new Identity("actor-1", partition);
        SyncHandler h = handler(SyncSettings.DEFAULTS);
        for (String clientId : List.of(BackfillRunner.clientId("titles_v2"), "[\"backfill\",\"x\"]",
                "[\"remote-command\",\"a\",\"b\"]", "[ \"backfill\" , \"x\" ]")) {
            SyncException e = assertThrows(SyncException.class, () -> h.handle(actor, new RequestMessage(1,
                    List.of(new ReqHeader(clientId, 1), insert("0:0:0", "t1", "p1")))), clientId);
            assertEquals(ErrorCode.SYNC_INVALID_CLIENT_ID, e.code(), clientId);
        }
        assertTrue(Reads.row(storage, partition, "tasks", "t1").isEmpty(), "nothing was written");
        assertTrue(Reads.pushResult(storage, partition, BackfillRunner.clientId("titles_v2"), "0:0:0").isEmpty(),
                "no result was stored under the runner's idempotency key");
        // an ordinary client id that merely mentions the word is fine
        List<ResponseFrame> ok = h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("backfill-fan", 1),
                insert("c1", "t1", "p1")))).response().frames();
        assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class, ok.get(1)).status());
    }

    @Test
    void aRequestWithMoreSubscriptionsThanTheCapIsInvalidBeforeAnyPullWork() {
        String partition = EmbeddedPostgresSupport.partition("subs");
        Identity actor = new Identity("actor-1", partition);
        int cap = SyncSettings.DEFAULTS.maxSubscriptionsPerRequest();
        assertTrue(cap >= 500, "the default is well above what real apps use");
        SyncHandler h = handler(SyncSettings.DEFAULTS);
        assertEquals(cap, pullWithSubscriptions(h, actor, cap).stream().filter(f -> f instanceof SubEnd).count(),
                "the cap itself is allowed");
        SyncException e = assertThrows(SyncException.class, () -> pullWithSubscriptions(h, actor, cap + 1));
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code());

        SyncHandler small = handler(SyncSettings.DEFAULTS.withMaxSubscriptionsPerRequest(3));
        assertEquals(3, pullWithSubscriptions(small, actor, 3).stream().filter(f -> f instanceof SubEnd).count());
        beforeWindowRead.set(() -> {
            throw new AssertionError("an over-cap request must not read the log");
        });
        SyncException e4 = assertThrows(SyncException.class, () -> pullWithSubscriptions(small, actor, 4));
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e4.code());
        assertTrue(e4.getMessage().contains("cap 3"), e4.getMessage());
        beforeWindowRead.set(null);
    }

    private static List<ResponseFrame> pullWithSubscriptions(SyncHandler h, Identity actor, int n) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader("client-subs", 1));
        frames.add(pullHeader());
        for (int i = 0; i < n; i++) {
            frames.add(new Subscription("s" + i, "tasks", Map.of("project_id", List.of("p" + i)), null, 0, null));
        }
        return h.handle(actor, new RequestMessage(1, frames)).response().frames();
    }
}

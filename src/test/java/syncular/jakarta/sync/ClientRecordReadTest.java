package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;

/** A push-and-pull round reads the client record once (issue 14: it was read twice) and still records it right. */
class ClientRecordReadTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    @Test
    void aRoundReadsTheClientRecordOnceAndKeepsWhatAPushOnlyRoundDoesNotReplace() {
        AtomicInteger reads = new AtomicInteger();
        ServerStorage counting = StorageHooks.around(storage, "preamble", reads::incrementAndGet, () -> { });
        SyncHandler handler = new SyncHandler(counting, () -> SCHEMA, List::of,
                identity -> Map.of("project_id", List.of("*")), () -> 1_000L, SyncSettings.DEFAULTS,
                (request, bytes) -> {
                    throw new AssertionError("no segment is published here");
                }, Validation.NONE, Leases.OFF);
        String partition = EmbeddedPostgresSupport.partition("record-once");
        Identity actor = new Identity("actor-1", partition);
        Subscription sub = new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, -1, null);
        PullHeader pull = new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS);

        var pushAndPull = handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PushCommit("k1", List.of(PushCommit.Operation.upsert("tasks", "t1", null,
                        TestSchemas.taskPayload(SCHEMA, "t1", "p1", "title", false)))), pull, sub)));
        assertEquals(PushResult.Status.APPLIED,
                assertInstanceOf(PushResult.class, pushAndPull.response().frames().get(1)).status());
        assertEquals(1, reads.get(), "one read of the client record per request: the preamble's");
        ClientRecord afterPull = storage.getClientRecord(partition, "c1").orElseThrow();
        assertEquals(List.of("s"), afterPull.subscriptions().stream().map(s -> s.id()).toList());

        // a push-only round keeps the subscriptions and cursor of the record it read
        reads.set(0);
        handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PushCommit("k2", List.of(PushCommit.Operation.upsert("tasks", "t2", null,
                        TestSchemas.taskPayload(SCHEMA, "t2", "p1", "title", false)))))));
        assertEquals(1, reads.get());
        ClientRecord afterPush = storage.getClientRecord(partition, "c1").orElseThrow();
        assertEquals(afterPull.subscriptions(), afterPush.subscriptions());
        assertEquals(afterPull.cursor(), afterPush.cursor());
    }
}

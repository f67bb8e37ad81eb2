package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;

/**
 * SPEC §6.3 end to end: a retry whose stored idempotency record cannot be read is answered the retryable
 * {@code sync.idempotency_cache_miss} (rejected, no commitSeq, one error at op 0), never re-applied, and the answer
 * is not persisted: the record is left as it was, and once it reads again the retry answers {@code cached}.
 */
class IdempotencyCacheMissTest {
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

    private static String storedResult(String partition) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT result::text FROM sync_push_results WHERE partition = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void setStoredResult(String partition, String json) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE sync_push_results SET result = ?::jsonb WHERE partition = ?")) {
            ps.setString(1, json);
            ps.setString(2, partition);
            ps.executeUpdate();
        }
    }

    @Test
    void anUnreadableRecordIsARetryableCacheMissAndNothingIsReappliedOrPersisted() throws Exception {
        SyncHandler handler = new SyncHandler(storage, () -> SCHEMA, List::of,
                identity -> Map.of("project_id", List.of("*")), () -> 1_000L, SyncSettings.DEFAULTS,
                (request, bytes) -> {
                    throw new AssertionError("no segment is published here");
                }, Validation.NONE, Leases.OFF);
        String partition = EmbeddedPostgresSupport.partition("cache-miss");
        Identity actor = new Identity("actor-1", partition);
        RequestMessage push = new RequestMessage(1, List.of(new ReqHeader("c1", 1), new PushCommit("k1",
                List.of(PushCommit.Operation.upsert("tasks", "t1", null,
                        TestSchemas.taskPayload(SCHEMA, "t1", "p1", "title", false))))));
        PushResult first = assertInstanceOf(PushResult.class, handler.handle(actor, push).response().frames().get(1));
        assertEquals(PushResult.Status.APPLIED, first.status());
        String readable = storedResult(partition);
        long head = storage.getMaxCommitSeq(partition);

        String corrupt = "{\"status\": \"garbled\"}";
        setStoredResult(partition, corrupt);
        PushResult miss = assertInstanceOf(PushResult.class, handler.handle(actor, push).response().frames().get(1));
        assertEquals(PushResult.Status.REJECTED, miss.status());
        assertNull(miss.commitSeq());
        assertEquals(1, miss.results().size());
        PushResult.OpError error = assertInstanceOf(PushResult.OpError.class, miss.results().get(0));
        assertEquals(0, error.opIndex());
        assertEquals(ErrorCode.SYNC_IDEMPOTENCY_CACHE_MISS.wire(), error.code());
        assertTrue(error.retryable(), "the client keeps the commit queued for an identical retry");
        assertEquals(head, storage.getMaxCommitSeq(partition), "nothing was re-applied");
        assertEquals(corrupt.replace(" ", ""), storedResult(partition).replace(" ", ""),
                "the miss is not persisted over the record");

        setStoredResult(partition, readable);
        PushResult cached = assertInstanceOf(PushResult.class, handler.handle(actor, push).response().frames().get(1));
        assertEquals(PushResult.Status.CACHED, cached.status(), "once readable again, the retry replays it");
        assertEquals(first.commitSeq(), cached.commitSeq());
    }
}

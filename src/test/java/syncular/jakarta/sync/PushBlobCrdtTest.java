package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RowCodec;

/**
 * §5.9.6/§6.6 and §5.10.2/§5.10.3 through the real push pipeline: this server has no blob store, so every non-NULL
 * {@code blob_ref} names a blob that does not exist ({@code blob.not_found}, as the reference answers with no store);
 * it has no CRDT merger, so every non-NULL {@code crdt} value is {@code sync.crdt_merge_failed} instead of being
 * stored last-write-wins. NULL values of both are ordinary writes. Each rejection rolls the commit back whole, is
 * not retryable, names the operation, and is stored (a replay repeats it).
 */
class PushBlobCrdtTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasksWith(1, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "attachment", "type": "blob_ref", "nullable": true},
            {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs"}""", "");
    private static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static final String BLOB = new BlobRef("sha256:" + "ab".repeat(32), 5, "text/plain", null).toJson();
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private PushProcessor push;
    private String partition;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    @BeforeEach
    void fresh() {
        push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
        partition = EmbeddedPostgresSupport.partition("blob");
    }

    private PushProcessor.Outcome apply(String commitId, PushCommit.Operation... ops) {
        return Pushes.one(push, new PushProcessor.RequestScope(new Identity("actor-1", partition), "client-1", 2),
                SCHEMA, ALL, new PushCommit(commitId, List.of(ops)));
    }

    private static PushCommit.Operation upsert(String id, Long base, String attachment, byte[] doc) {
        return PushCommit.Operation.upsert("tasks", id, base,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, "p1", attachment, doc}));
    }

    private static PushResult.OpError rejection(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        assertEquals(1, o.result().results().size(), "only the terminating record");
        assertFalse(o.details().isPresent(), "no PUSH_RESULT_DETAILS");
        return assertInstanceOf(PushResult.OpError.class, o.result().results().get(0));
    }

    @Test
    void nullBlobRefAndNullCrdtAreOrdinaryWrites() {
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", null, null, null)).result().status());
        assertEquals(PushResult.Status.APPLIED, apply("c2", upsert("a", 1L, null, null)).result().status());
        assertEquals(2, Reads.row(storage, partition, "tasks", "a").orElseThrow().serverVersion());
    }

    @Test
    void aBlobRefToABlobThatDoesNotExistIsBlobNotFoundOnInsertAndUpdate() {
        PushProcessor.Outcome insert = apply("c1", upsert("ok", null, null, null), upsert("a", null, BLOB, null));
        PushResult.OpError e = rejection(insert);
        assertEquals(1, e.opIndex());
        assertEquals("blob.not_found", e.code());
        assertFalse(e.retryable());
        assertFalse(e.message().contains("sha256:"), "the message names no row data");
        assertTrue(Reads.row(storage, partition, "tasks", "ok").isEmpty(), "the whole commit rolled back");
        assertEquals(insert.result(), apply("c1", upsert("ok", null, null, null), upsert("a", null, BLOB, null))
                .result(), "the rejection is stored and replayed");

        assertEquals(PushResult.Status.APPLIED, apply("c2", upsert("b", null, null, null)).result().status());
        PushResult.OpError update = rejection(apply("c3", upsert("b", 1L, BLOB, null)));
        assertEquals(0, update.opIndex());
        assertEquals("blob.not_found", update.code());
        assertEquals(1, Reads.row(storage, partition, "tasks", "b").orElseThrow().serverVersion(), "row unchanged");
    }

    @Test
    void aCrdtValueWithNoMergerRegisteredIsCrdtMergeFailedNeverLastWriteWins() {
        PushResult.OpError insert = rejection(apply("c1", upsert("a", null, null, new byte[] {1, 2, 3})));
        assertEquals(0, insert.opIndex());
        assertEquals("sync.crdt_merge_failed", insert.code());
        assertFalse(insert.retryable());
        assertTrue(insert.message().contains("yjs"), insert.message());
        assertTrue(Reads.row(storage, partition, "tasks", "a").isEmpty());

        assertEquals(PushResult.Status.APPLIED, apply("c2", upsert("b", null, null, null)).result().status());
        PushResult.OpError update = rejection(apply("c3", upsert("b", null, null, new byte[] {9})));
        assertEquals("sync.crdt_merge_failed", update.code());
        assertEquals(1, Reads.row(storage, partition, "tasks", "b").orElseThrow().serverVersion(), "not overwritten");
    }

    @Test
    void aVersionConflictIsReportedBeforeTheCrdtOrBlobCheck() {
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", null, null, null)).result().status());
        PushProcessor.Outcome o = apply("c2", upsert("a", 7L, BLOB, new byte[] {1}));
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        assertInstanceOf(PushResult.Conflict.class, o.result().results().get(0));
    }
}

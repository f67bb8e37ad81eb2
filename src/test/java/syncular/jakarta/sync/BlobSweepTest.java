package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresBlobStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RowCodec;

/**
 * The §5.9.2 orphan sweep over a real store and reference index: only blobs that are both older than the grace and
 * referenced by no row of their partition go; a fresh upload, a referenced blob and the same blob in another
 * partition stay; a blob whose last reference was deleted goes once it is old; a rerun changes nothing.
 */
class BlobSweepTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasksWith(1, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "file", "type": "blob_ref", "nullable": true}""", "");
    private static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private static PostgresBlobStore blobs;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        blobs = new PostgresBlobStore(db);
        blobs.install();
    }

    @AfterAll
    static void close() { db.close(); }

    private static String upload(String partition, String text, long atMs) throws Exception {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        String id = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        blobs.put(partition, id, new ByteArrayInputStream(bytes), 1 << 20, null, atMs);
        return id;
    }

    private static void push(PushProcessor push, String partition, String commitId, PushCommit.Operation op) {
        PushProcessor.Outcome o = Pushes.one(push, new PushProcessor.RequestScope(new Identity("a", partition), "c", 2),
                SCHEMA, Map.of("project_id", List.of("*")), new PushCommit(commitId, List.of(op)));
        assertEquals(PushResult.Status.APPLIED, o.result().status(), () -> o.result().toString());
    }

    private static PushCommit.Operation row(String id, String blobId) {
        String ref = blobId == null ? null : new BlobRef(blobId, 1, null, null).toJson();
        return PushCommit.Operation.upsert("tasks", id, null,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, "p1", ref}));
    }

    @Test
    void deletesExactlyTheOldUnreferencedBlobs() throws Exception {
        PushProcessor push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000, blobs);
        String p = EmbeddedPostgresSupport.partition("sweep");
        String q = EmbeddedPostgresSupport.partition("sweep");
        String orphan = upload(p, "orphan", 1_000);
        String referenced = upload(p, "referenced", 1_000);
        String unreferencedLater = upload(p, "dropped later", 1_000);
        String fresh = upload(p, "fresh", 90_000);
        String elsewhere = upload(q, "referenced", 1_000);   // same bytes, other partition, no row there
        push(push, p, "c1", row("r1", referenced));
        push(push, p, "c2", row("r2", unreferencedLater));
        push(push, p, "c3", PushCommit.Operation.delete("tasks", "r2", null));

        BlobSweep.Result r = BlobSweep.sweep(blobs, storage, 100_000, 50_000);
        assertTrue(blobs.find(p, orphan).isEmpty(), "old and unreferenced");
        assertTrue(blobs.find(p, unreferencedLater).isEmpty(), "its only row was deleted");
        assertTrue(blobs.find(q, elsewhere).isEmpty(), "a reference in another partition protects nothing here");
        assertTrue(blobs.find(p, referenced).isPresent(), "referenced by a live row");
        assertTrue(blobs.find(p, fresh).isPresent(), "inside the grace period");
        assertEquals(3, r.deleted());
        assertEquals(1, r.kept());
        assertEquals(new BlobSweep.Result(0, 1, 0), BlobSweep.sweep(blobs, storage, 100_000, 50_000), "a rerun");
    }
}

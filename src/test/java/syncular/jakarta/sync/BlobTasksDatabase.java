package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresBlobStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RowCodec;

/**
 * What the tests of blob references through the real push pipeline stand on: a database of its own (embedded
 * PostgreSQL) with a tasks table carrying two {@code blob_ref} columns and a {@code crdt} one, its server storage and
 * its blob store, both installed, and the one-commit push those tests make. A test class opens one for all its tests
 * and isolates each test by partition.
 */
final class BlobTasksDatabase implements AutoCloseable {
    static final CompiledSchema SCHEMA = TestSchemas.tasksWith(1, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "attachment", "type": "blob_ref", "nullable": true},
            {"name": "cover", "type": "blob_ref", "nullable": true},
            {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs"}""", "");
    static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();

    final EmbeddedPostgresSupport.Pool db;
    final PostgresServerStorage storage;
    final PostgresBlobStore blobs;

    private BlobTasksDatabase(EmbeddedPostgresSupport.Pool db) {
        this.db = db;
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        blobs = new PostgresBlobStore(db);
        blobs.install();
    }

    static BlobTasksDatabase open() { return new BlobTasksDatabase(EmbeddedPostgresSupport.newDatabase()); }

    @Override
    public void close() { db.close(); }

    /** An upsert of the task {@code id} in project p1. */
    static PushCommit.Operation upsert(String id, Long base, String attachment, String cover, byte[] doc) {
        return PushCommit.Operation.upsert("tasks", id, base,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, "p1", attachment, cover, doc}));
    }

    /** An upsert of the task {@code id} in project p1 with only an attachment. */
    static PushCommit.Operation upsert(String id, Long base, String attachment) {
        return upsert(id, base, attachment, null, null);
    }

    /** One commit of {@code ops} by {@code actor} from client-1, through the processor's group commit. */
    static PushProcessor.Outcome push(PushProcessor processor, Identity actor, Map<String, List<String>> allowed,
                                      String commitId, PushCommit.Operation... ops) {
        return Pushes.outcome(processor.push(batch(actor, allowed, commitId, ops)));
    }

    /** The batch {@link #push} pushes: one commit of {@code ops} by {@code actor} from client-1. */
    static PushProcessor.Batch batch(Identity actor, Map<String, List<String>> allowed, String commitId,
                                     PushCommit.Operation... ops) {
        return Pushes.batch(new PushProcessor.RequestScope(actor, "client-1", 2), SCHEMA, allowed,
                new PushCommit(commitId, List.of(ops)));
    }
}

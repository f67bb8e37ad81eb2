package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.List;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresSegmentStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;

/**
 * A fresh embedded database with {@code schema} installed and a segment store on it (no memory of recent bytes): what
 * the bootstrap tests that publish segments run on. The caller closes {@link #db}.
 */
record SegmentsDatabase(EmbeddedPostgresSupport.Pool db, PostgresServerStorage storage,
                        PostgresSegmentStore segments) {
    static SegmentsDatabase open(CompiledSchema schema) {
        EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase();
        PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                System::currentTimeMillis);
        storage.ensureSchema(schema, List.of());
        PostgresSegmentStore segments = new PostgresSegmentStore(db, 0);
        segments.install();
        return new SegmentsDatabase(db, storage, segments);
    }

    /**
     * Upserts the tasks {@code <project>-t<from>} … {@code <project>-t<to - 1>} ("title i", every other one done) in
     * one push of client "seeder" through {@code h}: a new row at version 1, an existing one at its next version.
     */
    static void writeTasks(SyncHandler h, CompiledSchema schema, Identity actor, String project, int from, int to) {
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = from; i < to; i++) {
            String id = String.format("%s-t%03d", project, i);
            ops.add(PushCommit.Operation.upsert("tasks", id, null,
                    TestSchemas.taskPayload(schema, id, project, "title " + i, i % 2 == 0)));
        }
        h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("seeder", 1),
                new PushCommit("seed-" + project + "-" + from + "-" + to, ops))));
    }
}

package syncular.jakarta.sync;

import java.util.List;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresSegmentStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;

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
}

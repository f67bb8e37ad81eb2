package syncular.jakarta.storage.postgres;

import org.junit.jupiter.api.AfterAll;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.SegmentStoreContractTest;

/** The PostgreSQL segment store on a real database (embedded PostgreSQL). */
class PostgresSegmentStoreTest extends SegmentStoreContractTest {
    static final EmbeddedPostgresSupport.Pool DB = EmbeddedPostgresSupport.newDatabase();
    static final PostgresSegmentStore STORE = new PostgresSegmentStore(DB, 0);

    @AfterAll
    static void close() { DB.close(); }

    @Override
    protected SegmentStore store() { return STORE; }

    @Override
    protected SegmentStore cachedStore(long cacheBytes) { return new PostgresSegmentStore(DB, cacheBytes); }

    @Override
    protected void overwriteStoredBytes(String segmentId) throws Exception {
        try (var c = DB.getConnection(); var ps = c.prepareStatement(
                "UPDATE sync_segments SET bytes = '\\x00' WHERE segment_id = ?")) {
            ps.setString(1, segmentId);
            ps.executeUpdate();
        }
    }
}

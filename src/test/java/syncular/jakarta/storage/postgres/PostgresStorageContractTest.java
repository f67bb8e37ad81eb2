package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.ServerStorageContractTest;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.TransactionRunner;

/**
 * The storage contract on PostgreSQL, plus what only this backend can show (a corrupted stored record). Runs on a
 * database whose default collation is ICU en-US, so the keyset-order contract test proves byte order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresStorageContractTest extends ServerStorageContractTest {
    private EmbeddedPostgresSupport.Pool db;
    private JdbcTransactionRunner runner;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newLinguisticDatabase();
        runner = new JdbcTransactionRunner(db);
        storage = new PostgresServerStorage(db, runner, () -> 42L);
        storage.ensureSchema(schema(), List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    @Override protected ServerStorage storage() { return storage; }

    @Override protected TransactionRunner runner() { return runner; }

    @Test
    void theDatabaseReallyOrdersTextLinguistically() throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT 'a' < 'B'")) {
            var rs = ps.executeQuery();
            rs.next();
            assertEquals(true, rs.getBoolean(1), "precondition of the byte-order test: a < B in this database");
        }
    }

    @Test @Seed("SPEC §6.3: unreadable stored result → sync.idempotency_cache_miss")
    void anUnreadableStoredPushResultIsACacheMiss() throws Exception {
        String p = partition("corrupt");
        storage.inTransaction(p, tx -> {
            tx.putPushResult("c1", "k1", StoredPushResult.applied(1, List.of()));
            return null;
        });
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE sync_push_results SET result = '{\"status\":\"weird\"}' WHERE partition = ?")) {
            ps.setString(1, p);
            ps.executeUpdate();
        }
        StorageException e = assertThrows(StorageException.class, () -> storage.getPushResult(p, "c1", "k1"));
        assertEquals(StorageErrorCode.IDEMPOTENCY_CACHE_MISS, e.code());
        assertEquals("sync.idempotency_cache_miss", e.code().code());
    }
}

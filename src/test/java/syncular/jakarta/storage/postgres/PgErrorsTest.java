package syncular.jakarta.storage.postgres;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.storage.StorageErrorCode;

/** Each classification of {@link PgErrors}, provoked on a real server (STYLE §6.5). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PgErrorsTest {
    private EmbeddedPostgresSupport.Pool db;

    @BeforeAll
    void setUp() throws SQLException {
        db = EmbeddedPostgresSupport.newDatabase();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t(id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0), (2, 0)");
        }
    }

    @AfterAll
    void tearDown() { db.close(); }

    private static StorageErrorCode code(SQLException e) { return PgErrors.classify(e).code(); }

    @Test
    void aUniqueViolationIsAConstraintViolation() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            assertEquals(StorageErrorCode.CONSTRAINT_VIOLATION,
                    code(assertThrows(SQLException.class, () -> s.execute("INSERT INTO t VALUES (1, 1)"))));
        }
    }

    @Test
    void nowaitOnAHeldRowIsLockNotAvailable() throws SQLException {
        try (Connection holder = db.rawConnection(); Connection other = db.rawConnection();
             Statement h = holder.createStatement(); Statement o = other.createStatement()) {
            holder.setAutoCommit(false);
            h.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE");
            assertEquals(StorageErrorCode.LOCK_NOT_AVAILABLE, code(assertThrows(SQLException.class,
                    () -> o.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT"))));
            holder.rollback();
        }
    }

    @Test @Timeout(30)
    void aDeadlockIsRetryable() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection a = db.rawConnection(); Connection b = db.rawConnection();
             Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            sa.execute("SET deadlock_timeout = '50ms'");
            sb.execute("SET deadlock_timeout = '50ms'");
            sa.execute("UPDATE t SET v = v + 1 WHERE id = 1");
            sb.execute("UPDATE t SET v = v + 1 WHERE id = 2");
            CompletableFuture<SQLException> first = CompletableFuture.supplyAsync(() -> {
                try {
                    sa.execute("UPDATE t SET v = v + 1 WHERE id = 2");
                    return null;
                } catch (SQLException e) {
                    return e;
                }
            }, pool);
            LockWaits.awaitLockWaiters(db, 1, 10_000);
            SQLException second = null;
            try {
                sb.execute("UPDATE t SET v = v + 1 WHERE id = 1");
            } catch (SQLException e) {
                second = e;
            }
            SQLException victim = second != null ? second : first.get(10, SECONDS);
            assertEquals("40P01", victim.getSQLState());
            assertEquals(StorageErrorCode.RETRY_TRANSACTION, code(victim));
            assertEquals(true, StorageErrorCode.RETRY_TRANSACTION.retryable());
            a.rollback();
            b.rollback();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aSerializationFailureIsRetryable() throws SQLException {
        try (Connection a = db.rawConnection(); Connection b = db.rawConnection();
             Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            a.setAutoCommit(false);
            sa.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            sa.execute("SELECT v FROM t WHERE id = 2");   // takes the snapshot
            sb.execute("UPDATE t SET v = v + 1 WHERE id = 2");   // autocommit: commits after a's snapshot
            SQLException e = assertThrows(SQLException.class, () -> sa.execute("UPDATE t SET v = v + 1 WHERE id = 2"));
            assertEquals("40001", e.getSQLState());
            assertEquals(StorageErrorCode.RETRY_TRANSACTION, code(e));
            a.rollback();
        }
    }

    @Test
    void aTerminatedSessionIsConnectionLost() throws SQLException {
        try (Connection victim = db.rawConnection(); Connection admin = db.getConnection();
             Statement v = victim.createStatement(); Statement s = admin.createStatement()) {
            var rs = v.executeQuery("SELECT pg_backend_pid()");
            rs.next();
            int pid = rs.getInt(1);
            s.execute("SELECT pg_terminate_backend(" + pid + ")");
            SQLException e = assertThrows(SQLException.class, () -> v.execute("SELECT 1"));
            assertEquals(StorageErrorCode.CONNECTION_LOST, code(e), () -> "SQLState " + e.getSQLState());
        }
    }

    @Test
    void aNulInTextIsDataRejected() throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT ?::text")) {
            ps.setString(1, "a\0b");
            SQLException e = assertThrows(SQLException.class, ps::executeQuery);
            assertEquals("22021", e.getSQLState());
            assertEquals(StorageErrorCode.DATA_REJECTED, code(e));
        }
    }

    @Test
    void jsonbRefusalsAreDataRejected() throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT ?::jsonb")) {
            for (String json : List.of("[1e999999]", "\"\\u0000\"", "[".repeat(100_000) + "]".repeat(100_000))) {
                ps.setString(1, json);
                SQLException e = assertThrows(SQLException.class, ps::executeQuery, json.substring(0, Math.min(10, json.length())));
                assertEquals(StorageErrorCode.DATA_REJECTED, code(e), () -> "SQLState " + e.getSQLState());
            }
        }
    }

    @Test
    void aKeyWiderThanABtreeEntryIsDataRejectedWithItsOperation() throws SQLException {
        StringBuilder key = new StringBuilder();
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 6000; i++) key.append((char) ('!' + r.nextInt(90)));   // random: compression cannot help
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             PreparedStatement ps = c.prepareStatement("INSERT INTO k VALUES (?)")) {
            s.execute("CREATE TABLE IF NOT EXISTS k(id text PRIMARY KEY)");
            ps.setString(1, key.toString());
            SQLException e = assertThrows(SQLException.class, ps::executeUpdate);
            assertEquals("54000", e.getSQLState());
            var classified = PgErrors.classifyRowWrite(e, 3);
            assertEquals(StorageErrorCode.DATA_REJECTED, classified.code());
            assertEquals(3, classified.opIndex().orElse(-1), "the rejection names the operation");
        }
    }

    @Test
    void aCreatorCommittingBeforeTheCatalogCheckIsALostCreateRace() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            // what the loser of IF NOT EXISTS sees when the winner committed between its check and its insert
            SQLException e = assertThrows(SQLException.class, () -> s.execute("CREATE TABLE t(id int)"));
            assertEquals("42P07", e.getSQLState());
            assertEquals(true, PgErrors.lostCreateRace(PgErrors.classify(e)));
        }
    }

    @Test @Timeout(30)
    void aCreatorCommittingAfterTheCatalogCheckIsALostCreateRace() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection winner = db.rawConnection(); Connection loser = db.rawConnection();
             Statement w = winner.createStatement(); Statement l = loser.createStatement()) {
            winner.setAutoCommit(false);
            w.execute("CREATE TABLE IF NOT EXISTS raced(id int PRIMARY KEY)");
            CompletableFuture<SQLException> lost = CompletableFuture.supplyAsync(() -> assertThrows(
                    SQLException.class, () -> l.execute("CREATE TABLE IF NOT EXISTS raced(id int PRIMARY KEY)")), pool);
            LockWaits.awaitLockWaiters(db, 1, 10_000);   // the loser passed its check and waits on the winner's catalog row
            winner.commit();
            SQLException e = lost.get(20, SECONDS);
            assertEquals("23505", e.getSQLState());
            assertEquals(true, PgErrors.lostCreateRace(PgErrors.classify(e)));
        } finally {
            pool.shutdownNow();
        }
        assertEquals(false, PgErrors.lostCreateRace(new SQLException("no state")));
    }

    @Test
    void anythingElseIsUnclassified() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            assertEquals(StorageErrorCode.UNCLASSIFIED,
                    code(assertThrows(SQLException.class, () -> s.execute("SELECT * FROM no_such_table"))));
        }
        assertEquals(StorageErrorCode.UNCLASSIFIED, PgErrors.classify(new RuntimeException("no SQLState")).code());
    }
}

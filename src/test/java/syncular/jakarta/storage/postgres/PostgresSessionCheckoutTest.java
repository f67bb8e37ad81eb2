package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.TestSchemas;

/**
 * A session's checkout from the container pool: Payara's pool, validating a connection the database killed, can fail
 * that one checkout fast while it replaces its connections (ConnectionLossIT on Payara answered 500 from it). Such a
 * fast failure is retried on a fresh checkout, a bounded number of times.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresSessionCheckoutTest {
    private EmbeddedPostgresSupport.Pool db;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L)
                .ensureSchema(TestSchemas.tasks(1), List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    /**
     * The pool's connections; while {@code failing} is above zero a checkout fails as Payara's does (and counts it
     * down), every checkout counted in {@code checkouts}.
     */
    private DataSource flaky(AtomicInteger failing, AtomicInteger checkouts) {
        return new DataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                checkouts.incrementAndGet();
                if (failing.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                    throw new SQLException("Error in allocating a connection. Cause: This Managed Connection is not "
                            + "valid as the physical connection is not usable");
                }
                return db.getConnection();
            }

            @Override
            public Connection getConnection(String u, String p) throws SQLException { return getConnection(); }

            @Override public PrintWriter getLogWriter() { return null; }
            @Override public void setLogWriter(PrintWriter out) { }
            @Override public void setLoginTimeout(int seconds) { }
            @Override public int getLoginTimeout() { return 0; }
            @Override public Logger getParentLogger() throws SQLFeatureNotSupportedException {
                throw new SQLFeatureNotSupportedException();
            }
            @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("no"); }
            @Override public boolean isWrapperFor(Class<?> iface) { return false; }
        };
    }

    /** A request's preamble, its checkouts failing {@code failures} times first. */
    private RequestPreamble preamble(int failures, AtomicInteger checkouts) {
        AtomicInteger failing = new AtomicInteger();
        PostgresServerStorage storage = new PostgresServerStorage(flaky(failing, checkouts),
                new JdbcTransactionRunner(db), () -> 0L);
        storage.ensureSchema(TestSchemas.tasks(1), List.of());
        checkouts.set(0);
        failing.set(failures);
        try (StorageSession s = storage.openSession("checkout")) {
            return s.preamble(1_000, "epoch-1", 1, "client-1", true);
        }
    }

    @Test
    void aCheckoutThatFailsFastIsRetriedOnAFreshOne() {
        AtomicInteger checkouts = new AtomicInteger();
        RequestPreamble pre = preamble(2, checkouts);
        assertEquals("epoch-1", pre.registry().logEpoch());
        assertEquals(3, checkouts.get(), "two failed checkouts, then the one that served");
    }

    @Test
    void aPoolThatKeepsFailingFailsTheRequestAfterTheBoundedRetries() {
        AtomicInteger checkouts = new AtomicInteger();
        assertThrows(StorageException.class, () -> preamble(Integer.MAX_VALUE, checkouts));
        assertEquals(PostgresSession.CONNECTION_RETRIES + 1, checkouts.get());
    }
}

package syncular.jakarta.web;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The container's pool as storage sees it, with each checkout timed (issue 20: {@code syncular_pool_wait_seconds}):
 * a pool too small for the load shows here first, as waits, before requests time out. Connections are the pool's
 * own, unwrapped, so driver-specific calls ({@code unwrap(PGConnection.class)}) behave exactly as before.
 */
final class TimedDataSource implements DataSource {
    private final DataSource pool;
    private final Timer waits;

    TimedDataSource(DataSource pool, MeterRegistry meters) {
        this.pool = pool;
        this.waits = Timer.builder("syncular.pool.wait").description("time to check a connection out of the pool")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(meters);
    }

    @Override
    public Connection getConnection() throws SQLException {
        long started = System.nanoTime();
        try {
            return pool.getConnection();
        } finally {
            waits.record(Duration.ofNanos(System.nanoTime() - started));
        }
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        long started = System.nanoTime();
        try {
            return pool.getConnection(user, password);
        } finally {
            waits.record(Duration.ofNanos(System.nanoTime() - started));
        }
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException { return pool.getLogWriter(); }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException { pool.setLogWriter(out); }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException { pool.setLoginTimeout(seconds); }

    @Override
    public int getLoginTimeout() throws SQLException { return pool.getLoginTimeout(); }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException { return pool.getParentLogger(); }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || pool.isWrapperFor(iface);
    }
}

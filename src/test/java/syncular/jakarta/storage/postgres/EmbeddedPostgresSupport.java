package syncular.jakarta.storage.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * One embedded PostgreSQL per test JVM (zonky, PG 17), started lazily. Tests share it without ordering: each gets
 * its own partition ids, and where DDL or schema state matters its own database ({@link #newDatabase()}).
 * Zonky runs with fsync and synchronous_commit off, so timings here are not durable-commit timings.
 */
public final class EmbeddedPostgresSupport {
    private static EmbeddedPostgres server;

    private EmbeddedPostgresSupport() { }

    public static synchronized EmbeddedPostgres server() {
        if (server == null) {
            try {
                server = EmbeddedPostgres.builder()
                        .setServerConfig("max_connections", "200")
                        .setServerConfig("shared_buffers", "128MB")
                        .start();
            } catch (IOException e) {
                throw new IllegalStateException("embedded PostgreSQL did not start", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // the JVM is going away
                }
            }));
        }
        return server;
    }

    /** A fresh, empty database and a small connection pool over it. */
    public static Pool newDatabase() { return newDatabase(""); }

    /**
     * A fresh database whose default collation is linguistic (ICU en-US: {@code a < B}, unlike byte order), so tests
     * run on it prove the storage orders row ids by bytes whatever the database's locale.
     */
    public static Pool newLinguisticDatabase() {
        return newDatabase(" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'");
    }

    private static Pool newDatabase(String options) {
        String name = "t_" + UUID.randomUUID().toString().replace("-", "");
        try (Connection c = server().getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name + options);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return new Pool(server().getJdbcUrl("postgres", name));
    }

    /** How many manual ANALYZEs of {@code table} the database counted ({@code pg_stat_user_tables}; 0 if unknown). */
    public static long analyzeCount(Pool db, String table) throws SQLException {
        try (Connection c = db.getConnection();
             java.sql.PreparedStatement ps = c.prepareStatement(
                     "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = ?")) {
            ps.setString(1, table);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    /** A unique partition id for one test. */
    public static String partition(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * A minimal blocking connection pool for tests and benchmarks: {@code close()} on a handed-out connection returns
     * it, with autocommit restored. Not a production pool: no validation, no eviction.
     */
    public static final class Pool implements DataSource, AutoCloseable {
        private final String url;
        private final LinkedBlockingDeque<Connection> idle = new LinkedBlockingDeque<>();

        Pool(String url) { this.url = url; }

        public String url() { return url; }

        @Override
        public Connection getConnection() throws SQLException {
            Connection physical = idle.pollFirst();
            if (physical == null || physical.isClosed()) physical = DriverManager.getConnection(url, "postgres", "");
            Connection target = physical;
            InvocationHandler h = new InvocationHandler() {
                boolean closed;

                @Override
                public Object invoke(Object proxy, java.lang.reflect.Method m, Object[] args) throws Throwable {
                    if (m.getName().equals("close")) {
                        if (!closed) {
                            closed = true;
                            if (!target.isClosed()) {
                                if (!target.getAutoCommit()) {
                                    target.rollback();
                                    target.setAutoCommit(true);
                                }
                                idle.offerFirst(target);
                            }
                        }
                        return null;
                    }
                    if (m.getName().equals("isClosed")) return closed || target.isClosed();
                    if (closed) throw new SQLException("connection returned to the pool");
                    try {
                        return m.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                }
            };
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, h);
        }

        /** A connection outside the pool (for tests that must hold one open across threads). */
        public Connection rawConnection() throws SQLException {
            return DriverManager.getConnection(url, "postgres", "");
        }

        @Override
        public void close() {
            Connection c;
            while ((c = idle.pollFirst()) != null) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // best effort
                }
            }
        }

        @Override public Connection getConnection(String u, String p) throws SQLException { return getConnection(); }
        @Override public PrintWriter getLogWriter() { return null; }
        @Override public void setLogWriter(PrintWriter out) { }
        @Override public void setLoginTimeout(int seconds) { }
        @Override public int getLoginTimeout() { return 0; }
        @Override public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }
        @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
        @Override public boolean isWrapperFor(Class<?> iface) { return false; }
    }
}

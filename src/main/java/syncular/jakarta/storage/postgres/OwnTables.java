package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;

/**
 * The tables of a store that works on its own connections in autocommit (segments, leases): their DDL runs once per
 * instance, before the first statement, and every unit of work gets a pooled connection of its own.
 */
final class OwnTables {
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private final DataSource dataSource;
    private final List<String> ddl;
    private volatile boolean installed;

    OwnTables(DataSource dataSource, List<String> ddl) {
        this.dataSource = dataSource;
        this.ddl = List.copyOf(ddl);
    }

    /** {@code work} on a connection of its own, the tables created first if this instance has not yet. */
    <T> T run(Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            if (!installed) install(c);
            return work.run(c);
        } catch (SQLException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }

    /** Creates the tables if absent; called once at start so concurrent first requests never race on DDL. */
    void install() {
        run(c -> null);
    }

    private synchronized void install(Connection c) throws SQLException {
        if (installed) return;
        try (Statement s = c.createStatement()) {
            for (String statement : ddl) s.execute(statement);
        }
        installed = true;
    }
}

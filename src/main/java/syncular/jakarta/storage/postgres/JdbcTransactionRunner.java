package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import syncular.jakarta.storage.SqlWork;
import syncular.jakarta.storage.TransactionRunner;

/**
 * A {@link TransactionRunner} over a plain (non-JTA) DataSource, for tests, benchmarks and non-container use: one
 * connection per transaction, autocommit off for the work, commit on return, rollback on any throwable, autocommit
 * restored before the connection goes back to its pool. Never use it on a container-managed connection.
 */
public final class JdbcTransactionRunner implements TransactionRunner {
    private final DataSource dataSource;

    public JdbcTransactionRunner(DataSource dataSource) { this.dataSource = dataSource; }

    @Override
    public <T> T inNewTransaction(SqlWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (Throwable t) {
                try {
                    c.rollback();
                } catch (SQLException rollbackFailure) {
                    t.addSuppressed(rollbackFailure);   // the first failure is the one the caller needs
                }
                if (t instanceof RuntimeException r) throw r;
                if (t instanceof Error e) throw e;
                throw PgErrors.classify(t);   // an SQLException from the work or from commit()
            } finally {
                try {
                    c.setAutoCommit(autoCommit);
                } catch (SQLException ignored) {
                    // the connection is broken; closing it below is all that is left to do
                }
            }
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }
}

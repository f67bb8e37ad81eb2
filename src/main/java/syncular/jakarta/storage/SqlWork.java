package syncular.jakarta.storage;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One unit of JDBC work on a connection that is already inside a transaction. The work must not commit, roll back,
 * or change autocommit: whoever runs it owns the transaction (a {@link TransactionRunner}, or the JTA container).
 */
@FunctionalInterface
public interface SqlWork<T> {
    T run(Connection connection) throws SQLException;
}

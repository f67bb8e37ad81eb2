package syncular.jakarta.storage;

/**
 * The seam through which storage gets a transaction of its own (a push commit, a migration, a checkpoint write, a
 * prune). An implementation obtains a connection, runs the work, then commits if it returned normally and rolls back
 * if it threw, rethrowing the first failure unchanged.
 *
 * <p>The JDBC implementation ({@code storage.postgres.JdbcTransactionRunner}) toggles autocommit itself; a JTA
 * implementation is an EJB method with {@code @TransactionAttribute(REQUIRES_NEW)} that takes a connection from the
 * container DataSource (already enlisted), calls {@code work.run(connection)} and lets the container commit. Work
 * always sets its own isolation level as its first statement (READ COMMITTED), so a runner does not have to.
 * Storage work classifies its own {@link java.sql.SQLException}s into {@link StorageException}s before they escape;
 * anything that still escapes must roll the transaction back and reach the caller as an unchecked exception.
 */
public interface TransactionRunner {
    <T> T inNewTransaction(SqlWork<T> work);
}

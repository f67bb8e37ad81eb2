package syncular.jakarta.web;

import jakarta.ejb.EJBException;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;
import javax.sql.DataSource;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.SqlWork;
import syncular.jakarta.storage.TransactionRunner;

/**
 * The JTA side of storage's {@code TransactionRunner}: one of the storage's own units (a migration, a checkpoint
 * write, a prune) in a container transaction of its own; the push group and the backfill batch have beans of their
 * own ({@link PushGroups}, {@link BackfillBatches}). The connection comes from the container DataSource already
 * enlisted; the container commits when this returns and rolls back when it throws.
 */
@Stateless
public class JtaTransactions {
    @TransactionAttribute(TransactionAttributeType.REQUIRES_NEW) // each unit commits on its own (ARCHITECTURE)
    public <T> T inNewTransaction(DataSource dataSource, SqlWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            // A checked exception would commit (EJB rules); as a system exception the container rolls back.
            throw new UnclassifiedSqlFailure(e);
        }
    }

    /** An SQLException the storage work did not classify; rolls the transaction back. */
    public static final class UnclassifiedSqlFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnclassifiedSqlFailure(SQLException e) { super("database failure (SQLState " + e.getSQLState() + ")", e); }
    }

    /** Storage's runner seam over this bean. */
    public static TransactionRunner runner(JtaTransactions bean, DataSource dataSource) {
        return new TransactionRunner() {
            @Override
            public <T> T inNewTransaction(SqlWork<T> work) {
                return unwrapped(() -> bean.inNewTransaction(dataSource, work));
            }
        };
    }

    /**
     * A call of a bean of this application, with what the EJB container wrapped unwrapped: a runtime exception the
     * work threw reaches the caller as it was thrown (a {@code StorageException} with its code, a refusal).
     */
    static <T> T unwrapped(Supplier<T> call) {
        try {
            return call.get();
        } catch (EJBException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e.getCausedByException();
            if (cause instanceof RuntimeException r) throw r;
            throw e;
        }
    }

    /**
     * The body of a unit's bean method ({@link PushGroups}, {@link BackfillBatches}): the storage's unit on a
     * connection of the container DataSource, which the container enlisted in the method's transaction.
     */
    static <T> T unitOnEnlisted(DataSource dataSource, ServerStorage storage, String partition, boolean staged,
                                ServerStorage.TransactionWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return storage.runUnit(c, partition, staged, work);
        } catch (SQLException e) {
            throw new UnclassifiedSqlFailure(e);
        }
    }
}

package syncular.jakarta.web;

import jakarta.ejb.EJBException;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import syncular.jakarta.storage.SqlWork;
import syncular.jakarta.storage.TransactionRunner;

/**
 * The JTA side of storage's {@code TransactionRunner}: one unit (a push commit, a migration, a checkpoint write) in
 * a container transaction of its own. The connection comes from the container DataSource already enlisted; the
 * container commits when this returns and rolls back when it throws.
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

    /** Storage's runner seam over this bean: unwraps what the EJB container wrapped. */
    public static TransactionRunner runner(JtaTransactions bean, DataSource dataSource) {
        return new TransactionRunner() {
            @Override
            public <T> T inNewTransaction(SqlWork<T> work) {
                try {
                    return bean.inNewTransaction(dataSource, work);
                } catch (EJBException e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e.getCausedByException();
                    if (cause instanceof RuntimeException r) throw r;
                    throw e;
                }
            }
        };
    }
}

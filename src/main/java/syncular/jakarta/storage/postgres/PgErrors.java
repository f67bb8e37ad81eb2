package syncular.jakarta.storage.postgres;

import java.sql.SQLException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;

/**
 * The one place a driver failure becomes a {@link StorageErrorCode} (STYLE §6.5). Walks the cause chain and
 * {@link SQLException#getNextException()} (a batch hides the server's error there) to the first SQLState.
 * Every branch has a test that provokes it on a real server ({@code PgErrorsTest}).
 *
 * <p>The writer-fence trigger raises its text under the generic {@code P0001} (seeds/003), so it is recognised by
 * SQLState {@code P0001} plus an exact match on the server's primary message, never a substring of
 * {@code getMessage()}.
 */
public final class PgErrors {
    /** The exact text {@code syncular_writer_fence()} raises (seeds/003). */
    public static final String WRITER_FENCE_TEXT = "sync.storage.writer_fence_rejected";

    private PgErrors() { }

    /** Classifies a driver failure; an already classified {@link StorageException} in the chain wins. */
    public static StorageException classify(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof StorageException se) return se;
        }
        SQLException sql = firstWithState(failure);
        return new StorageException(codeOf(sql), failure);
    }

    /** A class-23, 22 or 54 failure of one push operation: carries its index for the durable rejection. */
    public static StorageException classifyRowWrite(SQLException failure, int opIndex) {
        SQLException sql = firstWithState(failure);
        StorageErrorCode code = codeOf(sql);
        return new StorageException(code, java.util.Map.of(), isOperationRefusal(code) ? opIndex : -1, failure);
    }

    /**
     * Aborts a connection whose session the database ended, so its pool destroys it instead of handing it out
     * again (Payara marks it for removal, at the end of its transaction if one is in progress). Best effort: a
     * driver or pool without {@code abort} leaves it to the pool's validation.
     */
    public static void abort(java.sql.Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException | AbstractMethodError ignored) {
            // nothing more to do here; the pool's validation or exception sorter evicts it
        }
    }

    /** {@link #classify} of a failure on {@code c}; a lost connection is {@linkplain #abort aborted} first. */
    static StorageException classifyOn(java.sql.Connection c, SQLException failure) {
        StorageException e = classify(failure);
        if (e.code() == StorageErrorCode.CONNECTION_LOST) abort(c);
        return e;
    }

    /** Whether {@code failure} is a unique violation (SQLSTATE 23505): a row or index entry that already exists. */
    static boolean isUniqueViolation(Throwable failure) {
        SQLException sql = firstWithState(failure);
        return sql != null && "23505".equals(sql.getSQLState());
    }

    /** The refusals that belong to the written values, not to the infrastructure: a retry fails the same way. */
    public static boolean isOperationRefusal(StorageErrorCode code) {
        return code == StorageErrorCode.CONSTRAINT_VIOLATION || code == StorageErrorCode.DATA_REJECTED;
    }

    static StorageErrorCode codeOf(SQLException sql) {
        if (sql == null || sql.getSQLState() == null) return StorageErrorCode.UNCLASSIFIED;
        String state = sql.getSQLState();
        if (state.equals("P0001") && isWriterFence(sql)) return StorageErrorCode.WRITER_FENCE_REJECTED;
        if (state.equals("40001") || state.equals("40P01")) return StorageErrorCode.RETRY_TRANSACTION;
        if (state.equals("55P03")) return StorageErrorCode.LOCK_NOT_AVAILABLE;
        if (state.startsWith("23")) return StorageErrorCode.CONSTRAINT_VIOLATION;
        // class 22 (data exception) and 54 (program limit exceeded): the values are refused, whatever the retry
        if (state.startsWith("22") || state.startsWith("54")) return StorageErrorCode.DATA_REJECTED;
        // class 08, and 57P01..57P03: the server ended the session (pg_terminate_backend, shutdown, recovery)
        if (state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03")) {
            return StorageErrorCode.CONNECTION_LOST;
        }
        return StorageErrorCode.UNCLASSIFIED;
    }

    /**
     * Whether a failed {@code CREATE … IF NOT EXISTS} lost a race with another session creating the same object.
     * {@code IF NOT EXISTS} checks the catalog before inserting into it, so a concurrent creator that commits in
     * between makes the loser fail instead of skipping: with {@code 42P07}/{@code 42710} (duplicate table/object)
     * when it committed before the loser's own catalog check, with {@code 23505} on a catalog index when after.
     * Either way the object exists.
     */
    static boolean lostCreateRace(Throwable failure) {
        SQLException sql = firstWithState(failure);
        if (sql == null) return false;
        String state = sql.getSQLState();
        return state.equals("42P07") || state.equals("42710") || state.equals("23505");
    }

    private static boolean isWriterFence(SQLException sql) {
        if (!(sql instanceof PSQLException p)) return false;
        ServerErrorMessage m = p.getServerErrorMessage();
        return m != null && WRITER_FENCE_TEXT.equals(m.getMessage());
    }

    private static SQLException firstWithState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException s) {
                for (SQLException n = s; n != null; n = n.getNextException()) {
                    if (n.getSQLState() != null) return n;
                }
            }
        }
        return null;
    }
}

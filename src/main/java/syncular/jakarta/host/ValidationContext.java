package syncular.jakarta.host;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a validator may consult (SPEC §6.7 ValidateContext, §6.8 CommitValidationReader, seeds/001 validate.d.ts):
 * the ambient actor and partition, and authoritative reads that run on the push transaction's own connection, so
 * they see the operations staged before (for a commit validator: every staged operation) and never wait for a
 * second connection. There is deliberately no access to the connection itself: a validator must not write.
 *
 * <p>Valid only during the callback it was passed to. Any read that fails (an unknown table, a bad limit, SQL the
 * database refuses) rejects the commit with {@code sync.constraint_violation} even if the validator catches it:
 * the transaction cannot be trusted after a failed statement.
 */
public interface ValidationContext {
    String actorId();

    String partition();

    /** The candidate row of {@code table}, including this commit's staged writes; empty when absent or deleted. */
    Optional<ValidationRow> getRow(String table, String rowId);

    /**
     * Candidate rows of {@code table} whose stored scopes match {@code scopeFilter} (variable → allowed values; at
     * least one variable, else {@code sync.storage.scan_requires_scope}), in ascending row-id byte order, strictly
     * after {@code afterRowId} (null = from the start), at most {@code limit} (1 through 1,000; §6.8).
     */
    List<ValidationRow> scanRows(String table, Map<String, List<String>> scopeFilter, String afterRowId, int limit);

    /** {@link #scanRows(String, Map, String, int)} with the spec's default limit of 100. */
    default List<ValidationRow> scanRows(String table, Map<String, List<String>> scopeFilter) {
        return scanRows(table, scopeFilter, null, 100);
    }

    /**
     * One read-only SELECT over the application tables, on the push transaction (seeds/001
     * {@code queryAuthoritative}): every unqualified reference to a schema table reads only this partition's rows,
     * with the table's columns by their schema names. Parameters are JDBC {@code ?} placeholders bound in order
     * (String, Long/Integer, Double, Boolean, byte[] or null). Rows come back as column label → value (integer
     * types → Long, floating → Double, numeric → BigDecimal, json → its text, bytea → byte[]), at most 10,000.
     */
    List<Map<String, Object>> query(String sql, List<?> params);
}

package syncular.jakarta.host;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One push operation as a validator sees it (SPEC §6.7 "What it sees", §6.8 "Operation evidence").
 *
 * @param opIndex            the operation's index in the pushed commit
 * @param delete             true for a delete, false for an upsert
 * @param row                the row that will persist — post-scope-strip (§3.4), keyed by column name — or null for
 *                           a delete
 * @param stored             the currently stored row, or null when there is none (an insert, or the idempotent delete
 *                           of an absent row, which §6.8 still reports and §6.7 never validates)
 * @param storedServerVersion the stored row's version, or null
 * @param nextServerVersion  the version the write gives the row, or null for a delete
 */
public record ValidatedOperation(int opIndex, boolean delete, String table, String rowId, Map<String, Object> row,
                                 Map<String, Object> stored, Long storedServerVersion, Long nextServerVersion) {
    public ValidatedOperation {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
        if (row != null) row = Collections.unmodifiableMap(new LinkedHashMap<>(row));
        if (stored != null) stored = Collections.unmodifiableMap(new LinkedHashMap<>(stored));
    }

    /** {@code "upsert"} or {@code "delete"}, the spec's spelling. */
    public String op() { return delete ? "delete" : "upsert"; }
}

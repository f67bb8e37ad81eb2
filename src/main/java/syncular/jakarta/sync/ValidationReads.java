package syncular.jakarta.sync;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import syncular.jakarta.host.ValidationContext;
import syncular.jakarta.host.ValidationRow;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.RowCodec;

/**
 * The validators' {@link ValidationContext} over the push transaction (SPEC §6.7, §6.8, seeds/001 validate.d.ts):
 * every read goes through the {@link StorageTransaction} the commit is written on, so it sees the staged writes and
 * never takes a second connection.
 *
 * <p>A read that fails poisons the context: after a failed statement PostgreSQL refuses every further statement of
 * the transaction until it rolls back, so the commit cannot go on even if the validator swallows the exception. The
 * push asks {@link #failure()} after each callback and rejects the commit ({@code sync.constraint_violation}) —
 * the rollback to the push savepoint then makes the transaction usable for storing that rejection — unless the
 * failure was transient, which {@link Validation} rethrows so the whole transaction rolls back unstored.
 */
final class ValidationReads implements ValidationContext {
    /** §6.8: scan limits are integers from 1 through 1,000. */
    static final int MAX_SCAN_LIMIT = 1000;

    private final StorageTransaction tx;
    private final CompiledSchema schema;
    private final String actorId;
    private RuntimeException failure;

    ValidationReads(StorageTransaction tx, CompiledSchema schema, String actorId) {
        this.tx = tx;
        this.schema = schema;
        this.actorId = actorId;
    }

    @Override public String actorId() { return actorId; }

    @Override public String partition() { return tx.partition(); }

    /** The first read that failed, if any; the commit must then be rejected. */
    Optional<RuntimeException> failure() { return Optional.ofNullable(failure); }

    @Override
    public Optional<ValidationRow> getRow(String table, String rowId) {
        return guarded(() -> {
            TableSchema t = table(table);
            if (rowId == null) throw new IllegalArgumentException("getRow needs a row id");
            return tx.getRow(t.name(), rowId).map(r -> row(t, r));
        });
    }

    @Override
    public List<ValidationRow> scanRows(String table, Map<String, List<String>> scopeFilter, String afterRowId,
                                        int limit) {
        return guarded(() -> {
            TableSchema t = table(table);
            if (limit < 1 || limit > MAX_SCAN_LIMIT) {
                throw new IllegalArgumentException("scanRows limit must be an integer from 1 through 1,000 (§6.8)");
            }
            // an empty filter is refused by the storage with sync.storage.scan_requires_scope (§6.8)
            ScopeFilter filter = new ScopeFilter(scopeFilter == null ? Map.of() : scopeFilter);
            return tx.scanRows(new RowScanQuery(t.name(), filter, afterRowId, limit)).stream()
                    .map(r -> row(t, r)).toList();
        });
    }

    @Override
    public List<Map<String, Object>> query(String sql, List<?> params) {
        return guarded(() -> tx.queryAuthoritative(sql, params == null ? List.of() : params));
    }

    private TableSchema table(String name) {
        return schema.table(name).orElseThrow(() -> new IllegalArgumentException(
                "a validator read names a table the schema does not have"));
    }

    private <T> T guarded(Supplier<T> read) {
        if (failure != null) throw new IllegalStateException("an earlier validator read failed; the commit is lost",
                failure);
        try {
            return read.get();
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
    }

    static ValidationRow row(TableSchema table, StoredRow stored) {
        return new ValidationRow(stored.rowId(), stored.serverVersion(),
                values(table, RowCodec.decode(table.descriptors(), stored.payload())), stored.scopes());
    }

    /** Decoded values keyed by column name, in schema order. */
    static Map<String, Object> values(TableSchema table, Object[] values) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < values.length; i++) out.put(table.columns().get(i).name(), values[i]);
        return out;
    }
}

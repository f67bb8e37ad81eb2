package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ColumnVersions;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.ColumnBitmap;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.TypeTag;
import syncular.jakarta.wire.WireVersion;

/**
 * How a push upsert is decided, chosen once per request by its wire version (WIRE3-DELTA §10): the row-level rules
 * of wires 1 and 2 ({@link RowLevelWrites}, SPEC 0.15.48 §6.2) or the column-level rules of wire 3
 * ({@link ColumnLevelWrites}: sparse payloads, per-column versions and conflicts, tombstones). Both decide from the
 * same inputs and answer the same way: a rejection (error or conflict record), or the full row to write with the
 * values the validators see. Everything around the decision (table, resolver, delete, CRDT and blob checks, the
 * §6.7 validators, staging the write) is the push pipeline's, the same for every version.
 *
 * <p>Both rule sets maintain the same bookkeeping, so a fleet that mixes wire versions shares one truth: a wire-1/2
 * write is a full row, which leaves {@link ColumnVersions#NONE} (every column at the row's version), and every
 * applied delete records a tombstone whatever the version. A mixed fleet keeps wire 3's guarantees only between
 * wire-3 writers: a wire-2 full-row write re-sends every column, and a wire-2 unversioned upsert re-inserts a row a
 * wire-3 client deleted, as 0.15.48 specifies (docs/wire-versions.md).
 */
sealed interface WriteSemantics permits RowLevelWrites, ColumnLevelWrites {
    static WriteSemantics of(int wireVersion) {
        return WireVersion.hasSparsePayloads(wireVersion) ? ColumnLevelWrites.INSTANCE : RowLevelWrites.INSTANCE;
    }

    /**
     * Decides one upsert against the row as the group left it ({@code stored}; {@code tombstoned} says whether an
     * absent row has a tombstone and is asked only when it matters). {@code allowed} is the resolved scopes.
     */
    Decision upsert(TableSchema table, PushCommit.Operation op, int opIndex, Optional<StoredRow> stored,
                    BooleanSupplier tombstoned, Map<String, List<String>> allowed);

    /**
     * The values an upsert's payload carries (absent columns of a sparse payload are null), or null when it does not
     * decode; read before the partition lock, for the §5.9.6 blob look-up.
     */
    Object[] pushedValues(TableSchema table, byte[] payload);

    /**
     * The row an upsert writes (its new version, scopes, full-row payload and column versions), its decoded values
     * for the validators, and the stored row's values before it (null for an insert).
     */
    record Write(StoredRow row, Object[] values, Object[] storedValues) { }

    /** Exactly one of a rejection and a write. */
    record Decision(OperationResult rejection, Write write) {
        static Decision write(StoredRow row, Object[] values, Object[] storedValues) {
            return new Decision(null, new Write(row, values, storedValues));
        }

        static Decision reject(OperationResult rejection) { return new Decision(rejection, null); }

        static Decision reject(int opIndex, ErrorCode code, String message) {
            return reject(new OperationResult.Failed(opIndex, code.wire(), message, code.retryable(), null));
        }

        static Decision conflict(int opIndex, String message, StoredRow stored, byte[] conflictColumns) {
            return reject(new OperationResult.Conflict(opIndex, ErrorCode.SYNC_VERSION_CONFLICT.wire(), message,
                    stored.serverVersion(), stored.payload(), conflictColumns));
        }
    }

    /**
     * The conflictColumns bitmap (WIRE3-DELTA §1.4) of the {@code present} non-CRDT columns whose version moved past
     * {@code baseVersion} (the reference's rule; the primary key counts like any column).
     */
    static byte[] movedPast(TableSchema table, boolean[] present, StoredRow stored, long baseVersion) {
        List<ColumnSchema> columns = table.columns();
        boolean[] marked = new boolean[columns.size()];
        for (int i = 0; i < marked.length; i++) {
            marked[i] = present[i] && columns.get(i).type() != TypeTag.CRDT
                    && stored.columnVersions().of(i, stored.serverVersion()) > baseVersion;
        }
        return ColumnBitmap.of(marked.length, marked);
    }

    /**
     * The insert's scope checks (§3.4 step 2), in the reference's order: every scope column carries a value, the
     * database can store it, the actor may write it. Null when they pass.
     */
    static OperationResult insertScopesRefused(TableSchema table, int opIndex, Scopes.Extracted extracted,
                                               Map<String, List<String>> allowed, String missingMessage) {
        if (extracted.missing() != null) {
            return new OperationResult.Failed(opIndex, ErrorCode.SYNC_FORBIDDEN.wire(), missingMessage, false, null);
        }
        OperationResult unstorable = StorableInput.scopes(opIndex, table, extracted.scopes());
        if (unstorable != null) return unstorable;
        if (!Scopes.authorizeWrite(table, extracted.scopes(), allowed)) {
            return new OperationResult.Failed(opIndex, ErrorCode.SYNC_FORBIDDEN.wire(),
                    "insert denied by scope authorization (§3.4)", false, null);
        }
        return null;
    }
}

package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.ScopePattern;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ColumnVersions;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.ColumnBitmap;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SparseRow;
import syncular.jakarta.wire.SparseRowCodec;
import syncular.jakarta.wire.TypeTag;

/**
 * The upsert rules of wire version 3 (SPEC §6.2 at 008c36d5, WIRE3-DELTA §3 and §4, in the reference's order): the
 * payload is a sparse row whose present columns are the write's intent. Against an existing row: authorize the
 * stored row; a present scope column that differs from the stored value is {@code sync.invalid_request}; a
 * {@code baseVersion} above the row's version too; {@code baseVersion} 0 (a lost insert race) conflicts on every
 * present non-CRDT column but the key; another {@code baseVersion} conflicts iff a present non-CRDT column moved
 * past it; else the present columns overlay the stored row, which is re-encoded as a full row, and they move to the
 * new version. Against an absent row: {@code baseVersion} above 0 is {@code sync.row_missing} (after authorizing
 * the payload); an unversioned upsert of a row with a tombstone is {@code sync.row_deleted}; an insert needs every
 * column present ({@code sync.row_missing} otherwise), then the scope checks; it clears the tombstone.
 */
final class ColumnLevelWrites implements WriteSemantics {
    static final ColumnLevelWrites INSTANCE = new ColumnLevelWrites();

    static final String CONFLICT_MESSAGE = "present columns moved past baseVersion (§6.2)";

    private ColumnLevelWrites() { }

    @Override
    public Object[] pushedValues(TableSchema table, byte[] payload) {
        try {
            return SparseRowCodec.decode(table.descriptors(), table.primaryKeyIndex(), payload).values();
        } catch (DecodeException e) {
            return null;
        }
    }

    @Override
    public Decision upsert(TableSchema table, PushCommit.Operation op, int i, Optional<StoredRow> stored,
                           BooleanSupplier tombstoned, Map<String, List<String>> allowed) {
        SparseRow sparse;
        try {
            sparse = SparseRowCodec.decode(table.descriptors(), table.primaryKeyIndex(), op.payload());
        } catch (DecodeException e) {
            return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST,
                    "row payload failed row-codec decode (§1.7): " + e.getMessage());
        }
        Object[] pushed = sparse.values();
        Optional<String> pk = Scopes.render(pushed[table.primaryKeyIndex()]);
        if (pk.isEmpty() || !pk.get().equals(op.rowId())) {
            return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "payload primary key does not match rowId");
        }
        OperationResult unstorable = StorableInput.jsonColumns(i, table, pushed);
        if (unstorable != null) return Decision.reject(unstorable);
        boolean[] present = sparse.present();
        return stored.isPresent() ? update(table, op, i, stored.get(), present, pushed, allowed)
                : insert(table, op, i, sparse, pushed, tombstoned, allowed);
    }

    private static Decision update(TableSchema table, PushCommit.Operation op, int i, StoredRow s, boolean[] present,
                                   Object[] pushed, Map<String, List<String>> allowed) {
        if (!Scopes.authorizeWrite(table, s.scopes(), allowed)) {
            return Decision.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
        }
        Object[] storedValues = RowCodec.decode(table.descriptors(), s.payload());
        for (ScopePattern p : table.scopes()) {
            int c = table.columnIndex(p.column());
            if (present[c] && !Objects.equals(pushed[c], storedValues[c])) {
                return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "scope column is immutable on update (§3.4)");
            }
        }
        Long base = op.baseVersion();
        if (base != null && base > s.serverVersion()) {
            return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST,
                    "baseVersion exceeds the stored server version (§6.2)");
        }
        List<ColumnSchema> columns = table.columns();
        int key = table.primaryKeyIndex();
        if (base != null && base == 0) {
            // a lost insert race: the stored row was authorized above, so disclosing it is permitted
            boolean[] marked = new boolean[columns.size()];
            for (int c = 0; c < marked.length; c++) {
                marked[c] = present[c] && columns.get(c).type() != TypeTag.CRDT && c != key;
            }
            return Decision.conflict(i, CONFLICT_MESSAGE, s, ColumnBitmap.of(marked.length, marked));
        }
        if (base != null) {
            byte[] moved = WriteSemantics.movedPast(table, present, s, base);
            if (anySet(moved)) return Decision.conflict(i, CONFLICT_MESSAGE, s, moved);
        }
        Object[] values = storedValues.clone();
        boolean[] written = new boolean[columns.size()];
        for (int c = 0; c < values.length; c++) {
            if (!present[c]) continue;
            values[c] = pushed[c];
            written[c] = c != key;   // the key is immutable: its version never moves
        }
        long version = s.serverVersion() + 1;
        ColumnVersions versions = s.columnVersions().written(columns.size(), s.serverVersion(), written, version);
        StoredRow row = new StoredRow(op.rowId(), version, s.scopes(), RowCodec.encode(table.descriptors(), values),
                versions);
        return Decision.write(row, values, storedValues);
    }

    private static Decision insert(TableSchema table, PushCommit.Operation op, int i, SparseRow sparse,
                                   Object[] pushed, BooleanSupplier tombstoned, Map<String, List<String>> allowed) {
        Long base = op.baseVersion();
        if (base != null && base != 0) {
            // authorize the payload first, so an actor without the scope does not learn the row is absent
            Scopes.Extracted first = Scopes.extract(table, pushed);
            if (first.missing() != null || !Scopes.authorizeWrite(table, first.scopes(), allowed)) {
                return Decision.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
            }
            return Decision.reject(i, ErrorCode.SYNC_ROW_MISSING, "upsert with baseVersion targets an absent row (§6.2)");
        }
        if (base == null && tombstoned.getAsBoolean()) {
            // a delete within the retention horizon beats an unversioned upsert; baseVersion 0 recreates instead
            return Decision.reject(i, ErrorCode.SYNC_ROW_DELETED,
                    "a deleted row rejects an unversioned upsert within the retention horizon (§5.2)");
        }
        if (!sparse.allPresent()) {
            return Decision.reject(i, ErrorCode.SYNC_ROW_MISSING, "a partial payload targets an absent row (§6.3)");
        }
        Scopes.Extracted extracted = Scopes.extract(table, pushed);
        OperationResult refused = WriteSemantics.insertScopesRefused(table, i, extracted, allowed,
                "insert missing scope column value for \"" + extracted.missing() + "\" (§3.4)");
        if (refused != null) return Decision.reject(refused);
        StoredRow row = new StoredRow(op.rowId(), 1, extracted.scopes(), RowCodec.encode(table.descriptors(), pushed));
        return Decision.write(row, pushed, null);
    }

    private static boolean anySet(byte[] bitmap) {
        for (byte b : bitmap) if (b != 0) return true;
        return false;
    }
}

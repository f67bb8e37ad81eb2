package syncular.jakarta.sync;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import syncular.jakarta.schema.ScopePattern;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RowCodec;

/**
 * The upsert rules of wire versions 1 and 2 (SPEC 0.15.48 §6.2, §3.4; REF push pipeline, SPEC-DIGEST §8.2): the
 * payload is a full row; an existing row conflicts unless {@code baseVersion} is absent or equals its version;
 * scope columns are immutable on update and silently keep their stored values; an absent row is inserted at version
 * 1 unless {@code baseVersion} names a version. The row written is the pushed bytes (re-encoded only when a scope
 * column was reset), with every column at the new version.
 */
final class RowLevelWrites implements WriteSemantics {
    static final RowLevelWrites INSTANCE = new RowLevelWrites();

    private RowLevelWrites() { }

    @Override
    public Object[] pushedValues(TableSchema table, byte[] payload) {
        try {
            return RowCodec.decode(table.descriptors(), payload);
        } catch (DecodeException e) {
            return null;
        }
    }

    @Override
    public Decision upsert(TableSchema table, PushCommit.Operation op, int i, Optional<StoredRow> stored,
                           BooleanSupplier tombstoned, Map<String, List<String>> allowed) {
        Object[] values;
        try {
            values = RowCodec.decode(table.descriptors(), op.payload());
        } catch (DecodeException e) {
            return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "row payload failed row-codec decode (§1.7)");
        }
        Optional<String> pk = Scopes.render(values[table.primaryKeyIndex()]);
        if (pk.isEmpty() || !pk.get().equals(op.rowId())) {
            return Decision.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "payload primary key does not match rowId");
        }
        OperationResult unstorable = StorableInput.jsonColumns(i, table, values);
        if (unstorable != null) return Decision.reject(unstorable);

        if (stored.isPresent()) {
            StoredRow s = stored.get();
            if (!Scopes.authorizeWrite(table, s.scopes(), allowed)) {
                return Decision.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
            }
            if (op.baseVersion() != null && op.baseVersion() != s.serverVersion()) {
                boolean[] all = new boolean[values.length];
                Arrays.fill(all, true);
                return Decision.conflict(i, "row version does not match baseVersion (§6.2)", s,
                        WriteSemantics.movedPast(table, all, s, op.baseVersion()));
            }
            // §3.4: scope columns are immutable on update; the stored values win.
            Object[] storedValues = RowCodec.decode(table.descriptors(), s.payload());
            boolean mutated = false;
            for (ScopePattern p : table.scopes()) {
                int c = table.columnIndex(p.column());
                if (!Objects.equals(values[c], storedValues[c])) {
                    values[c] = storedValues[c];
                    mutated = true;
                }
            }
            byte[] payload = mutated ? RowCodec.encode(table.descriptors(), values) : op.payload();
            return Decision.write(new StoredRow(op.rowId(), s.serverVersion() + 1, s.scopes(), payload), values,
                    storedValues);
        }

        Scopes.Extracted extracted = Scopes.extract(table, values);
        if (op.baseVersion() != null && op.baseVersion() != 0) {
            if (extracted.missing() != null || !Scopes.authorizeWrite(table, extracted.scopes(), allowed)) {
                return Decision.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
            }
            return Decision.reject(i, ErrorCode.SYNC_ROW_MISSING, "upsert with baseVersion targets an absent row (§6.2)");
        }
        OperationResult refused = WriteSemantics.insertScopesRefused(table, i, extracted, allowed,
                "insert lacks a value for a scope column (§3.4)");
        if (refused != null) return Decision.reject(refused);
        return Decision.write(new StoredRow(op.rowId(), 1, extracted.scopes(), op.payload()), values, null);
    }
}

package syncular.jakarta.wire;

import java.util.List;
import java.util.Map;

/**
 * COMMIT (0x13): one committed log entry, self-contained (SPEC §4.5). {@code tables} is a frame-local dictionary that
 * changes index with a u16; a change's {@code rowVersion} and {@code row} are present iff it is an upsert.
 * Named with a suffix to keep clear of storage's commit record (STYLE §6.2).
 */
public record CommitFrame(long commitSeq, long createdAtMs, String actorId, List<String> tables, List<Change> changes)
        implements ResponseFrame {
    public CommitFrame {
        Checks.safe(commitSeq, "COMMIT.commitSeq");
        Checks.safe(createdAtMs, "COMMIT.createdAtMs");
        Checks.nonNull(actorId, "COMMIT.actorId");
        tables = Checks.list(tables, "COMMIT.tables");
        changes = Checks.list(changes, "COMMIT.changes");
        for (Change c : changes) {
            if (c.tableIndex() >= tables.size()) throw new IllegalArgumentException("COMMIT change tableIndex out of range");
        }
    }

    @Override public int frameType() { return FrameType.COMMIT.code(); }

    /** One change; {@code scopes} are the stored scopes (variable → value). */
    public record Change(int tableIndex, String rowId, Op op, Long rowVersion, Map<String, String> scopes, byte[] row) {
        public Change {
            if (tableIndex < 0 || tableIndex > 0xffff) throw new IllegalArgumentException("COMMIT change tableIndex must be a u16");
            Checks.nonNull(rowId, "COMMIT.rowId");
            if (op == null) throw new IllegalArgumentException("COMMIT.op is required");
            Checks.safe(rowVersion, "COMMIT.rowVersion");
            scopes = Checks.stringMap(scopes, "COMMIT.scopes");
            // SPEC Conventions presence ties: rowVersion and row each present iff upsert
            boolean upsert = op == Op.UPSERT;
            if ((rowVersion != null) != upsert || (row != null) != upsert) {
                throw new IllegalArgumentException("COMMIT change rowVersion and row must be present iff op is upsert");
            }
        }

        public static Change upsert(int tableIndex, String rowId, long rowVersion, Map<String, String> scopes, byte[] row) {
            return new Change(tableIndex, rowId, Op.UPSERT, rowVersion, scopes, row);
        }

        public static Change delete(int tableIndex, String rowId, Map<String, String> scopes) {
            return new Change(tableIndex, rowId, Op.DELETE, null, scopes, null);
        }
    }
}

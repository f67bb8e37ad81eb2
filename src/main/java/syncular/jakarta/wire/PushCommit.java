package syncular.jakarta.wire;

import java.util.List;

/**
 * PUSH_COMMIT (0x02): one client commit of ≥ 1 operations (SPEC §6.1). An operation's {@code payload} is a row-codec
 * row, opaque to the envelope codec; it is present iff the op is an upsert. {@code baseVersion} is allowed on
 * deletes and ignored there.
 */
public record PushCommit(String clientCommitId, List<Operation> operations) implements RequestFrame {
    public PushCommit {
        Checks.nonEmpty(clientCommitId, "PUSH_COMMIT.clientCommitId");
        operations = Checks.list(operations, "PUSH_COMMIT.operations");
        if (operations.isEmpty()) throw new IllegalArgumentException("PUSH_COMMIT needs ≥ 1 operation (sync.empty_commit)");
    }

    @Override public int frameType() { return FrameType.PUSH_COMMIT.code(); }

    /** One push operation. {@code baseVersion} null = absent (last-write-wins, SPEC §6.2). */
    public record Operation(String table, String rowId, Op op, Long baseVersion, byte[] payload) {
        public Operation {
            Checks.nonNull(table, "PUSH_COMMIT.table");
            Checks.nonNull(rowId, "PUSH_COMMIT.rowId");
            if (op == null) throw new IllegalArgumentException("PUSH_COMMIT.op is required");
            Checks.safe(baseVersion, "PUSH_COMMIT.baseVersion");
            // SPEC Conventions presence tie: payload present iff upsert
            if ((payload != null) != (op == Op.UPSERT)) {
                throw new IllegalArgumentException("PUSH_COMMIT.payload must be present iff op is upsert");
            }
        }

        public static Operation upsert(String table, String rowId, Long baseVersion, byte[] payload) {
            return new Operation(table, rowId, Op.UPSERT, baseVersion, payload);
        }

        public static Operation delete(String table, String rowId, Long baseVersion) {
            return new Operation(table, rowId, Op.DELETE, baseVersion, null);
        }
    }
}

package syncular.jakarta.wire;

import java.util.List;

/**
 * PUSH_RESULT (0x11): the outcome of one PUSH_COMMIT (SPEC §6.3). {@code commitSeq} is present iff the status is
 * applied or cached (a presence tie, checked at decode and here).
 */
public record PushResult(String clientCommitId, Status status, Long commitSeq, List<OpResult> results) implements ResponseFrame {
    public PushResult {
        Checks.nonNull(clientCommitId, "PUSH_RESULT.clientCommitId");
        if (status == null) throw new IllegalArgumentException("PUSH_RESULT.status is required");
        Checks.safe(commitSeq, "PUSH_RESULT.commitSeq");
        if ((commitSeq != null) != (status != Status.REJECTED)) {
            throw new IllegalArgumentException("PUSH_RESULT.commitSeq must be present iff status is applied or cached");
        }
        results = Checks.list(results, "PUSH_RESULT.results");
    }

    @Override public int frameType() { return FrameType.PUSH_RESULT.code(); }

    /** The commit-level status enum byte. */
    public enum Status {
        APPLIED(1, "applied"), CACHED(2, "cached"), REJECTED(3, "rejected");

        private final int code;
        private final String jsonName;

        Status(int code, String jsonName) {
            this.code = code;
            this.jsonName = jsonName;
        }

        public int code() { return code; }

        public String jsonName() { return jsonName; }

        static Status forCode(int code) {
            return code == 1 ? APPLIED : code == 2 ? CACHED : code == 3 ? REJECTED : null;
        }
    }

    /** One per-operation record: applied (1), conflict (2) or error (3). */
    public sealed interface OpResult permits Applied, Conflict, OpError {
        int opIndex();

        /** The record status byte. */
        int statusCode();
    }

    public record Applied(int opIndex) implements OpResult {
        @Override public int statusCode() { return 1; }
    }

    /**
     * A conflict record: {@code serverRow} is the current row in the full-row codec of the request's schema version.
     * {@code conflictColumns} is the wire-3 evidence (SPEC @008c36d5 §6.3): a {@link ColumnBitmap} marking the present
     * columns whose column version passed {@code baseVersion}, written after {@code serverRow} as {@code bytes}. The
     * encoder requires it on wire ≥ 3 and leaves it out on wire 1 and 2, where a decoded record has {@code null}. The
     * codec cannot check its length (it does not know the table).
     */
    public record Conflict(int opIndex, String code, String message, long serverVersion, byte[] serverRow,
            byte[] conflictColumns) implements OpResult {
        public Conflict {
            Checks.nonNull(code, "PUSH_RESULT.conflict.code");
            Checks.nonNull(message, "PUSH_RESULT.conflict.message");
            Checks.safe(serverVersion, "PUSH_RESULT.conflict.serverVersion");
            if (serverRow == null) throw new IllegalArgumentException("PUSH_RESULT.conflict.serverRow is required");
        }

        @Override public int statusCode() { return 2; }
    }

    public record OpError(int opIndex, String code, String message, boolean retryable) implements OpResult {
        public OpError {
            Checks.nonNull(code, "PUSH_RESULT.error.code");
            Checks.nonNull(message, "PUSH_RESULT.error.message");
        }

        /** An error record from the catalog (retryability fixed per code, SPEC §10.2). */
        public static OpError of(int opIndex, ErrorCode code, String message) {
            return new OpError(opIndex, code.wire(), message, code.retryable());
        }

        @Override public int statusCode() { return 3; }
    }
}

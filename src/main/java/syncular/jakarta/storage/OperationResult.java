package syncular.jakarta.storage;

import java.util.Objects;

/**
 * The stored outcome of one push operation (SPEC §6.3), persisted with the commit for idempotent replay (§2.3).
 * Sealed so a later wire version can add a kind.
 */
public sealed interface OperationResult {
    int opIndex();

    record Applied(int opIndex) implements OperationResult { }

    /**
     * {@code serverRow} is the row-codec payload of the winning row, as stored. {@code conflictColumns} is the wire-3
     * bitmap of the columns that moved past the push's baseVersion (presence-bitmap layout, WIRE3-DELTA §1.4),
     * computed for every conflict whatever the wire version, so a replay under wire 3 answers what was decided; null
     * only in results stored before it was (wire 1/2 encodings leave it out).
     */
    record Conflict(int opIndex, String code, String message, long serverVersion, byte[] serverRow,
                    byte[] conflictColumns) implements OperationResult {
        public Conflict {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(serverRow, "serverRow");
        }
    }

    /** {@code detailsJson}: the PUSH_RESULT_DETAILS object (SPEC §6.3.1) as normalized JSON text, or null. */
    record Failed(int opIndex, String code, String message, boolean retryable, String detailsJson)
            implements OperationResult {
        public Failed {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(message, "message");
        }
    }
}

package syncular.jakarta.storage;

import java.util.List;
import java.util.Objects;

/**
 * The stored outcome of one push operation (SPEC §6.3), persisted with the commit for idempotent replay (§2.3).
 * Sealed so a later wire version can add a kind; a conflict already carries {@code conflictColumns}, which wire
 * versions 1 and 2 leave empty and wire 3 fills (WIRE3-DELTA §8.4).
 */
public sealed interface OperationResult {
    int opIndex();

    record Applied(int opIndex) implements OperationResult { }

    /** {@code serverRow} is the row-codec payload of the winning row, as stored. */
    record Conflict(int opIndex, String code, String message, long serverVersion, byte[] serverRow,
                    List<String> conflictColumns) implements OperationResult {
        public Conflict {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(serverRow, "serverRow");
            conflictColumns = List.copyOf(conflictColumns);
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

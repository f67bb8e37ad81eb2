package syncular.jakarta.storage;

import java.util.Map;
import java.util.OptionalInt;

/**
 * The one failure type of the storage layer (STYLE §6.4): a {@link StorageErrorCode}, its fixed message, and
 * details (table, column, reason of a layout mismatch, …) that start-up logs but no response renders. A driver
 * exception stays attached as the cause only.
 */
public final class StorageException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final StorageErrorCode code;
    private final transient Map<String, String> details;
    private final int opIndex;

    public StorageException(StorageErrorCode code) { this(code, Map.of(), -1, null); }

    public StorageException(StorageErrorCode code, Map<String, String> details) { this(code, details, -1, null); }

    public StorageException(StorageErrorCode code, Throwable cause) { this(code, Map.of(), -1, cause); }

    public StorageException(StorageErrorCode code, Map<String, String> details, int opIndex, Throwable cause) {
        super(code.message(), cause);
        this.code = code;
        this.details = Map.copyOf(details);
        this.opIndex = opIndex;
    }

    public StorageErrorCode code() { return code; }

    /** Identifiers that explain the failure to an operator; never rendered to a client. */
    public Map<String, String> details() { return details; }

    /** The push operation a {@link StorageErrorCode#CONSTRAINT_VIOLATION} or {@code DATA_REJECTED} belongs to, when known. */
    public OptionalInt opIndex() { return opIndex < 0 ? OptionalInt.empty() : OptionalInt.of(opIndex); }

    @Override
    public String toString() {
        return "StorageException[" + code.code() + (details.isEmpty() ? "" : " " + details) + "]";
    }
}

package syncular.jakarta.wire;

/**
 * The one decode failure of the wire layer (SPEC §1.7): carries the catalog code, and a message that names the
 * field, offset and counts but never echoes payload bytes.
 */
public final class DecodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;

    public DecodeException(ErrorCode code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    /** A {@code sync.invalid_request} decode error. */
    public static DecodeException invalid(String message) {
        return new DecodeException(ErrorCode.SYNC_INVALID_REQUEST, message);
    }

    public ErrorCode code() { return code; }
}

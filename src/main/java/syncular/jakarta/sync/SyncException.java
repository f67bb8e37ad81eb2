package syncular.jakarta.sync;

import syncular.jakarta.wire.ErrorCode;

/**
 * A request-level failure (SPEC §1.7, §10): the whole request fails with a catalog code, answered as JSON over HTTP
 * or as {@code RESP_HEADER ERROR END} on a socket. Never used for operation-level push outcomes, which are values.
 * The message is operator-facing text without row data; {@code detailsJson} is optional JSON.
 */
public final class SyncException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;
    private final String detailsJson;

    public SyncException(ErrorCode code, String message) { this(code, message, null); }

    public SyncException(ErrorCode code, String message, String detailsJson) {
        super(message, null, false, false);
        this.code = code;
        this.detailsJson = detailsJson;
    }

    public ErrorCode code() { return code; }

    /** Raw JSON or null. */
    public String detailsJson() { return detailsJson; }

    /**
     * The refusal {@code failure} carries: itself, or the first SyncException in its cause chain (EJB containers wrap
     * what a bean throws, e.g. in an {@code EJBException}); null when there is none. The one rule by which every
     * transport answers a wrapped refusal with its own code and reports it so.
     */
    public static SyncException in(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SyncException s) return s;
            if (t.getCause() == t) break;
        }
        return null;
    }
}

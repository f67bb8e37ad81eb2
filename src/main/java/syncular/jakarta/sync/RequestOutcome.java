package syncular.jakarta.sync;

import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;

/**
 * How one sync request ended, as its {@code request.handled} event reports it (issue 20), the same whichever
 * transport carried it: {@code ok} with no error code; {@code rejected} with the refusal's own code when the server
 * refused it on purpose ({@link SyncException}, also wrapped by a container: auth, size, gate;
 * {@link DecodeException}: a malformed request); and anything else thrown is {@code error} with
 * {@code sync.internal_error}, the code the client was answered with. One rule, so an operator counting outcomes
 * sees an HTTP request and a socket round that failed alike as alike.
 */
public record RequestOutcome(String outcome, String errorCode) {
    /** A request answered in full. */
    public static final RequestOutcome OK = new RequestOutcome("ok", null);

    /** The outcome of a request that threw {@code failure} instead of producing its answer. */
    public static RequestOutcome of(Throwable failure) {
        SyncException refusal = SyncException.in(failure);   // also when a container wrapped it
        if (refusal != null) return new RequestOutcome("rejected", refusal.code().wire());
        if (failure instanceof DecodeException e) return new RequestOutcome("rejected", e.code().wire());
        return new RequestOutcome("error", ErrorCode.SYNC_INTERNAL_ERROR.wire());
    }
}

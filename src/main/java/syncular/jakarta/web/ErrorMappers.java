package syncular.jakarta.web;

import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import syncular.jakarta.wire.ErrorCode;

/**
 * Every failure of a JAX-RS resource leaves as a catalog JSON body (SPEC §10.1), never the container's HTML page,
 * by the rule of {@link ErrorBodies#failure} (a {@code SyncException} or {@code DecodeException} with its code and
 * that code's status, anything unexpected as {@code sync.internal_error}), one mapper for every throwable; the
 * framework's own 404/405/406 stay as they are.
 */
public final class ErrorMappers {
    private ErrorMappers() { }

    @Provider
    public static class FailureMapper implements ExceptionMapper<Throwable> {
        @Override
        public Response toResponse(Throwable e) {
            if (e instanceof NotSupportedException) {
                return ErrorBodies.of(415, ErrorCode.SYNC_INVALID_REQUEST, "unsupported content type", null);
            }
            if (e instanceof WebApplicationException w && w.getResponse().getStatus() < 500) {
                return w.getResponse(); // the framework's own 404/405/406: not ours to rewrite
            }
            return ErrorBodies.of(ErrorBodies.failure(e));
        }
    }
}

package syncular.jakarta.web;

import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import java.lang.System.Logger.Level;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;

/**
 * Every failure leaves as a catalog JSON body (SPEC §10.1), never the container's HTML page: request-level
 * {@link SyncException}s with their code, decode errors as 400 with theirs, an oversized body as 413
 * {@code sync.invalid_request}, and anything unexpected as 500
 * {@code sync.internal_error} (retryable, no internal detail; the log has it).
 */
public final class ErrorMappers {
    private static final System.Logger LOG = System.getLogger(ErrorMappers.class.getName());

    private ErrorMappers() { }

    @Provider
    public static class SyncExceptionMapper implements ExceptionMapper<SyncException> {
        @Override
        public Response toResponse(SyncException e) {
            return ErrorBodies.of(e.code(), e.getMessage(), e.detailsJson());
        }
    }

    @Provider
    public static class DecodeExceptionMapper implements ExceptionMapper<DecodeException> {
        @Override
        public Response toResponse(DecodeException e) {
            return ErrorBodies.of(e.code(), e.getMessage(), null);
        }
    }

    @Provider
    public static class UnexpectedMapper implements ExceptionMapper<Throwable> {
        @Override
        public Response toResponse(Throwable e) {
            if (e instanceof NotSupportedException) {
                return ErrorBodies.of(415, ErrorCode.SYNC_INVALID_REQUEST, "unsupported content type", null);
            }
            if (e instanceof WebApplicationException w && w.getResponse().getStatus() < 500) {
                return w.getResponse(); // the framework's own 404/405/406: not ours to rewrite
            }
            if (e instanceof HttpBodies.RequestTooLarge t) {
                return ErrorBodies.of(413, ErrorCode.SYNC_INVALID_REQUEST, t.getMessage(),
                        "{\"limit\":\"syncular.limits.max-request-bytes\",\"maxBytes\":" + t.maxBytes + "}");
            }
            SyncException refusal = SyncException.in(e);
            if (refusal != null) return new SyncExceptionMapper().toResponse(refusal);
            LOG.log(Level.ERROR, "unexpected failure while serving a request", e);
            return ErrorBodies.of(ErrorCode.SYNC_INTERNAL_ERROR, "the server failed unexpectedly; retry later", null);
        }
    }
}

package syncular.jakarta.web;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The §10.1 JSON error body {@code {code, category, retryable, recommendedAction, message, details?}}, and the one
 * rule for which failure answers what ({@link #failure}), for the JAX-RS resources ({@link ErrorMappers}) and the
 * sync servlet alike.
 */
public final class ErrorBodies {
    private static final System.Logger LOG = System.getLogger(ErrorBodies.class.getName());

    private ErrorBodies() { }

    /** A failure's answer: HTTP status, catalog code, message, details JSON (or null). */
    record Failure(int status, ErrorCode code, String message, String detailsJson) { }

    /**
     * Request-level {@link SyncException}s (also wrapped) with their code, decode errors as 400 with theirs, an
     * oversized body as 413 {@code sync.invalid_request}, and anything unexpected as 500 {@code sync.internal_error}
     * (retryable, no internal detail; the log has it).
     */
    static Failure failure(Throwable e) {
        if (e instanceof DecodeException d) return new Failure(d.code().httpStatus(), d.code(), d.getMessage(), null);
        if (e instanceof HttpBodies.RequestTooLarge t) {
            return new Failure(413, ErrorCode.SYNC_INVALID_REQUEST, t.getMessage(),
                    "{\"limit\":\"syncular.limits.max-request-bytes\",\"maxBytes\":" + t.maxBytes + "}");
        }
        SyncException refusal = SyncException.in(e);
        if (refusal != null) {
            // a 500 refusal (a storage failure, a missing scope resolution) is the operator's to see; a client's
            // mistake and a 503 while the server starts are not logged
            if (refusal.code().httpStatus() == 500) {
                LOG.log(Level.WARNING, "request failed: " + refusal.code().wire(), e);
            }
            return new Failure(refusal.code().httpStatus(), refusal.code(), refusal.getMessage(),
                    refusal.detailsJson());
        }
        LOG.log(Level.ERROR, "unexpected failure while serving a request", e);
        return new Failure(ErrorCode.SYNC_INTERNAL_ERROR.httpStatus(), ErrorCode.SYNC_INTERNAL_ERROR,
                "the server failed unexpectedly; retry later", null);
    }

    public static Response of(ErrorCode code, String message, String detailsJson) {
        return of(code.httpStatus(), code, message, detailsJson);
    }

    public static Response of(int status, ErrorCode code, String message, String detailsJson) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(json(code, message, detailsJson))
                .header("Cache-Control", "no-store").build();
    }

    static Response of(Failure f) { return of(f.status(), f.code(), f.message(), f.detailsJson()); }

    /** Answers {@code failure} on a servlet response that nothing was written to yet. */
    static void write(HttpServletResponse res, Throwable failure) throws IOException {
        Failure f = failure(failure);
        write(res, f.status(), f.code(), f.message(), f.detailsJson());
    }

    static void write(HttpServletResponse res, int status, ErrorCode code, String message, String detailsJson)
            throws IOException {
        byte[] body = json(code, message, detailsJson).getBytes(StandardCharsets.UTF_8);
        res.setStatus(status);
        res.setContentType(MediaType.APPLICATION_JSON);
        res.setHeader("Cache-Control", "no-store");
        res.setContentLength(body.length);
        res.getOutputStream().write(body);
    }

    private static String json(ErrorCode code, String message, String detailsJson) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("code", code.wire());
        body.put("category", code.category().wire());
        body.put("retryable", code.retryable());
        body.put("recommendedAction", code.action().wire());
        body.put("message", message);
        if (detailsJson != null) body.put("details", new Json.RawJson(detailsJson));
        return Json.write(body);
    }
}

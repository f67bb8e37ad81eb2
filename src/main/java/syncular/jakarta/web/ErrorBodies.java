package syncular.jakarta.web;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/** The §10.1 JSON error body {@code {code, category, retryable, recommendedAction, message, details?}}. */
public final class ErrorBodies {
    private ErrorBodies() { }

    public static Response of(ErrorCode code, String message, String detailsJson) {
        return of(code.httpStatus(), code, message, detailsJson);
    }

    public static Response of(int status, ErrorCode code, String message, String detailsJson) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("code", code.wire());
        body.put("category", code.category().wire());
        body.put("retryable", code.retryable());
        body.put("recommendedAction", code.action().wire());
        body.put("message", message);
        if (detailsJson != null) body.put("details", new Json.RawJson(detailsJson));
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(Json.write(body))
                .header("Cache-Control", "no-store").build();
    }
}

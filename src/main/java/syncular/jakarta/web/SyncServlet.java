package syncular.jakarta.web;

import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Optional;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Identity;
import syncular.jakarta.sync.RequestOutcome;
import syncular.jakarta.sync.ResponseSpool;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.RequestDecoder;
import syncular.jakarta.wire.RequestMessage;

/**
 * {@code POST /sync} (SPEC §1.1): an SSP2 request in, an SSP2 response out. The media type is checked before
 * authentication (415, REF); gzip request bodies are decoded and capped after decoding; the response is built whole
 * and verified by the serve gate before a byte is sent (RFC 0007 read-verify-refuse), then compressed per
 * {@code Accept-Encoding}. Every failure leaves as the §10.1 JSON body ({@link ErrorBodies#failure}).
 *
 * <p>A servlet, not a JAX-RS resource (issue 15): this one route carries every client's traffic, and the JAX-RS
 * runtime around a resource method (routing, request-scoped injection, the entity provider lookups, its response
 * pipeline, and on Payara the telemetry listener it registers per request) was about 29 % of the server's CPU under
 * the mixed soak, more than the handler itself (docs/benchmarks.md). The exact mapping {@code /sync} wins over the
 * JAX-RS application's {@code /*} in every container; the other routes stay resources. No request state is held.
 */
@WebServlet(urlPatterns = "/sync")
public class SyncServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    public static final String MEDIA_TYPE = "application/vnd.syncular.sync.v2";
    private static final String ALLOW = "POST, OPTIONS";

    @Inject
    transient SyncRuntime runtime;

    /** POST; OPTIONS says so (a CORS preflight is the CORS filter's); any other method is 405, the catalog body. */
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
        switch (req.getMethod()) {
            case "POST" -> doPost(req, res);
            case "OPTIONS" -> {
                res.setHeader("Allow", ALLOW);
                res.setStatus(HttpServletResponse.SC_OK);
            }
            default -> {
                res.setHeader("Allow", ALLOW);
                ErrorBodies.write(res, 405, ErrorCode.SYNC_INVALID_REQUEST, "POST an SSP2 request to this route", null);
            }
        }
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse res) throws IOException {
        if (!MEDIA_TYPE.equalsIgnoreCase(mediaType(req.getContentType()))) {
            ErrorBodies.write(res, 415, ErrorCode.SYNC_INVALID_REQUEST, "Content-Type must be " + MEDIA_TYPE, null);
            return;
        }
        Optional<SyncRuntime.Parts> running = runtime.parts();
        if (running.isEmpty()) {
            ErrorBodies.write(res, new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                    "the server is starting or its database is unreachable", "{}"));
            return;
        }
        SyncRuntime.Parts parts = running.get();
        long started = System.nanoTime();
        Identity identity = null;
        RequestMessage request = null;
        long bytesIn = 0;
        RequestOutcome outcome = null;
        ResponseSpool spool = null;
        try {
            identity = runtime.authenticate(parts, RequestCredentials.of(req), "http");
            byte[] bytes = HttpBodies.readRequest(req.getInputStream(), req.getHeader("Content-Encoding"),
                    parts.config().limits().maxRequestBytes());
            bytesIn = bytes.length;
            request = RequestDecoder.decode(bytes);
            // encoded (and beyond the threshold spilled to a file) BEFORE the gate re-read, then streamed (issue #5)
            spool = parts.handler().handle(identity, request,
                    built -> ResponseSpool.encode(built, parts.config().limits().responseSpillBytes())).body();
            outcome = RequestOutcome.OK;
        } catch (Throwable e) {
            outcome = RequestOutcome.of(e);
            ErrorBodies.write(res, e);
            return;
        } finally {
            // the answer was produced (or refused): its body streams after this, so bytesOut is the body's size
            runtime.events().emit(new ServerEvent.RequestHandled(parts.clock().nowMs(),
                    identity == null ? "" : identity.partition(), identity == null ? null : identity.actorId(),
                    request == null ? null : request.header().clientId(), "http",
                    System.nanoTime() - started, bytesIn, spool == null ? 0 : spool.size(), outcome.outcome(),
                    outcome.errorCode(),
                    request == null ? 0 : request.pushCommits().size(),
                    request != null && request.pullHeader().isPresent()));
        }
        respond(res, spool, req.getHeader("Accept-Encoding"));
    }

    /**
     * Streams a spooled body, compressed per {@code Accept-Encoding} (zstd, then gzip, as {@link HttpBodies}; small
     * bodies as they are), and deletes the spool's file once written (or failed). Memory stays bounded by the spool's
     * threshold and the copy buffers, whatever the body's size.
     */
    private static void respond(HttpServletResponse res, ResponseSpool spool, String acceptEncoding)
            throws IOException {
        try {
            String coding = HttpBodies.coding(spool.size(), acceptEncoding);
            res.setStatus(HttpServletResponse.SC_OK);
            res.setContentType(MEDIA_TYPE);
            res.setHeader("Cache-Control", "no-store");
            res.addHeader("Vary", "Accept-Encoding");   // added: the CORS filter may have said Vary: Origin
            if (coding == null) {
                res.setContentLengthLong(spool.size());
                spool.writeTo(res.getOutputStream());
                return;
            }
            res.setHeader("Content-Encoding", coding);
            try (OutputStream encoded = HttpBodies.encoding(res.getOutputStream(), coding)) {
                spool.writeTo(encoded);
            }
        } finally {
            spool.close();
        }
    }

    /** The {@code type/subtype} of a {@code Content-Type} value, without its parameters; "" when absent. */
    static String mediaType(String contentType) {
        if (contentType == null) return "";
        int semicolon = contentType.indexOf(';');
        return (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim();
    }
}

package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;
import io.airlift.compress.zstd.ZstdOutputStream;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Credentials;
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
 * {@code Accept-Encoding}.
 *
 * <p>One instance for the application (issue 14): a per-request resource cost Jersey a new object with its CDI
 * injection on every request; this one holds no request state.
 */
@ApplicationScoped
@Path("sync")
public class SyncResource {
    public static final String MEDIA_TYPE = "application/vnd.syncular.sync.v2";

    @Inject
    SyncRuntime runtime;

    @POST
    @Consumes(MediaType.WILDCARD)
    public Response post(InputStream body, @Context HttpHeaders headers, @Context UriInfo uri) throws IOException {
        MediaType type = headers.getMediaType();
        if (type == null || !MEDIA_TYPE.equalsIgnoreCase(type.getType() + "/" + type.getSubtype())) {
            return ErrorBodies.of(415, ErrorCode.SYNC_INVALID_REQUEST,
                    "Content-Type must be " + MEDIA_TYPE, null);
        }
        SyncRuntime.Parts parts = runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
        long started = System.nanoTime();
        Identity identity = null;
        RequestMessage request = null;
        long bytesIn = 0;
        RequestOutcome outcome = null;
        long bytesOut = 0;
        try {
            identity = runtime.authenticate(parts, credentials(headers, uri), "http");
            byte[] bytes = HttpBodies.readRequest(body, headers.getHeaderString(HttpHeaders.CONTENT_ENCODING),
                    parts.config().limits().maxRequestBytes());
            bytesIn = bytes.length;
            request = RequestDecoder.decode(bytes);
            RequestMessage decoded = request;
            Identity caller = identity;
            // encoded (and beyond the threshold spilled to a file) BEFORE the gate re-read, then streamed (issue #5)
            ResponseSpool spool = parts.handler().handle(caller, decoded,
                    built -> ResponseSpool.encode(built, parts.config().limits().responseSpillBytes())).body();
            bytesOut = spool.size();
            outcome = RequestOutcome.OK;
            return respond(Response.ok().type(MEDIA_TYPE), spool,
                    headers.getHeaderString(HttpHeaders.ACCEPT_ENCODING), "Accept-Encoding")
                    .header("Cache-Control", "no-store").build();
        } catch (Throwable e) {
            outcome = RequestOutcome.of(e);
            throw e;
        } finally {
            // the answer was produced (or refused): its body streams after this, so bytesOut is the body's size
            runtime.events().emit(new ServerEvent.RequestHandled(parts.clock().nowMs(),
                    identity == null ? "" : identity.partition(), identity == null ? null : identity.actorId(),
                    request == null ? null : request.header().clientId(), "http",
                    System.nanoTime() - started, bytesIn, bytesOut, outcome.outcome(),
                    outcome.errorCode(),
                    request == null ? 0 : request.pushCommits().size(),
                    request != null && request.pullHeader().isPresent()));
        }
    }

    /**
     * Streams a spooled body, compressed per {@code Accept-Encoding} (zstd, then gzip, as {@link HttpBodies}; small
     * bodies as they are), and deletes the spool's file once written (or failed). Memory stays bounded by the spool's
     * threshold and the copy buffers, whatever the body's size.
     */
    private static Response.ResponseBuilder respond(Response.ResponseBuilder builder, ResponseSpool spool,
                                                    String acceptEncoding, String vary) {
        builder.header("Vary", vary);
        boolean large = spool.size() >= HttpBodies.MIN_COMPRESS_BYTES;
        String coding = !large ? null : HttpBodies.accepts(acceptEncoding, "zstd") ? "zstd"
                : HttpBodies.accepts(acceptEncoding, "gzip") ? "gzip" : null;
        StreamingOutput body = out -> {
            try {
                if ("zstd".equals(coding)) {
                    // closing the zstd stream writes its last block; the container's stream stays the container's
                    ZstdOutputStream z = new ZstdOutputStream(new java.io.FilterOutputStream(out) {
                        @Override
                        public void write(byte[] b, int off, int len) throws IOException { out.write(b, off, len); }

                        @Override
                        public void close() throws IOException { out.flush(); }
                    });
                    spool.writeTo(z);
                    z.close();
                } else if ("gzip".equals(coding)) {
                    GZIPOutputStream gz = new GZIPOutputStream(out, 64 * 1024);
                    spool.writeTo(gz);
                    gz.finish();
                } else {
                    spool.writeTo(out);
                }
            } finally {
                spool.close();
            }
        };
        if (coding != null) return builder.entity(body).header("Content-Encoding", coding);
        return builder.entity(body).header("Content-Length", spool.size());
    }

    static Credentials credentials(HttpHeaders headers, UriInfo uri) {
        return new Credentials() {
            @Override
            public Optional<String> header(String name) { return Optional.ofNullable(headers.getHeaderString(name)); }

            @Override
            public Optional<String> queryParameter(String name) {
                return Optional.ofNullable(uri.getQueryParameters().getFirst(name));
            }
        };
    }
}

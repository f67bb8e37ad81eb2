package syncular.jakarta.web;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.host.Identity;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.RequestDecoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseEncoder;

/**
 * {@code POST /sync} (SPEC §1.1): an SSP2 request in, an SSP2 response out. The media type is checked before
 * authentication (415, REF); gzip request bodies are decoded and capped after decoding; the response is built whole
 * and verified by the serve gate before a byte is sent (RFC 0007 read-verify-refuse), then compressed per
 * {@code Accept-Encoding}.
 */
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
        Identity identity = parts.authenticator().authenticate(credentials(headers, uri))
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "authentication required"));
        byte[] bytes = HttpBodies.readRequest(body, headers.getHeaderString(HttpHeaders.CONTENT_ENCODING),
                parts.config().limits().maxRequestBytes());
        RequestMessage request = RequestDecoder.decode(bytes);
        SyncHandler.Handled handled = parts.handler().handle(identity, request);
        byte[] encoded = ResponseEncoder.encode(handled.response());
        return HttpBodies.respond(Response.ok().type(MEDIA_TYPE), encoded,
                headers.getHeaderString(HttpHeaders.ACCEPT_ENCODING), "Accept-Encoding")
                .header("Cache-Control", "no-store").build();
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

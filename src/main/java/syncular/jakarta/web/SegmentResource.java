package syncular.jakarta.web;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import syncular.jakarta.host.Identity;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * {@code GET /segments/{segmentId}} (SPEC §5.5): re-authorized on every request from {@code X-Syncular-Scopes};
 * {@code ETag: "<segmentId>"} with 304 on {@code If-None-Match}; gzip per {@code Accept-Encoding} (§1.3), the id
 * always naming the uncompressed bytes.
 */
@Path("segments/{segmentId}")
public class SegmentResource {
    static final String VARY = "Authorization, X-Syncular-Scopes, Accept-Encoding";

    @Inject
    SyncRuntime runtime;

    @GET
    public Response download(@PathParam("segmentId") String segmentId, @Context HttpHeaders headers,
                             @Context UriInfo uri) throws IOException {
        SyncRuntime.Parts parts = runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
        Identity identity = parts.authenticator().authenticate(SyncResource.credentials(headers, uri))
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "authentication required"));
        byte[] bytes = parts.segmentDownload().download(identity, segmentId, headers.getHeaderString("X-Syncular-Scopes"));
        String etag = "\"" + segmentId + "\"";
        String ifNoneMatch = headers.getHeaderString("If-None-Match");
        if (ifNoneMatch != null && (ifNoneMatch.trim().equals("*") || java.util.Arrays.stream(ifNoneMatch.split(","))
                .map(String::trim).anyMatch(etag::equals))) {
            return Response.notModified().header("ETag", etag).header("Cache-Control", "private, max-age=0")
                    .header("Vary", VARY).build();
        }
        return HttpBodies.respond(Response.ok().type("application/octet-stream"), bytes,
                        headers.getHeaderString(HttpHeaders.ACCEPT_ENCODING), VARY)
                .header("ETag", etag).header("Cache-Control", "private, max-age=0").build();
    }
}

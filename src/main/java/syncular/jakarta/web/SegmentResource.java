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
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Identity;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * {@code GET /segments/{segmentId}} (SPEC §5.5): re-authorized on every request from {@code X-Syncular-Scopes};
 * {@code ETag: "<segmentId>"} with 304 on {@code If-None-Match}; gzip per {@code Accept-Encoding} (§1.3), the id
 * always naming the uncompressed bytes. With an {@code st} query parameter it is the signed-URL host (§5.4): the token
 * is the whole grant, no credentials are read, and a cache in front may keep the bytes until the token expires.
 */
@Path("segments/{segmentId}")
public class SegmentResource {
    static final String VARY = "Authorization, X-Syncular-Scopes, Accept-Encoding";
    /** A signed URL's answer depends on nothing but the URL and the encoding. */
    static final String SIGNED_VARY = "Accept-Encoding";

    @Inject
    SyncRuntime runtime;

    /** Every download is a {@code segment.served} event, served or refused with its code (issue 20). */
    @GET
    public Response download(@PathParam("segmentId") String segmentId, @Context HttpHeaders headers,
                             @Context UriInfo uri) throws IOException {
        SyncRuntime.Parts parts = runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
        long started = System.nanoTime();
        String errorCode = ErrorCode.SYNC_INTERNAL_ERROR.wire();
        // what the answer served: [partition, actor] as far as known, and the body's bytes
        String[] who = {"", null};
        long[] bytes = {0};
        try {
            Response answer = answer(parts, segmentId, headers, uri, who, bytes);
            errorCode = null;
            return answer;
        } catch (SyncException e) {
            errorCode = e.code().wire();
            throw e;
        } finally {
            runtime.events().emit(new ServerEvent.SegmentServed(parts.clock().nowMs(), who[0], who[1], segmentId,
                    errorCode == null ? "ok" : "refused", errorCode, bytes[0],
                    (System.nanoTime() - started) / 1_000_000));
        }
    }

    private Response answer(SyncRuntime.Parts parts, String segmentId, HttpHeaders headers, UriInfo uri,
                            String[] who, long[] served) throws IOException {
        java.util.List<String> tokens = uri.getQueryParameters().get("st");
        if (tokens != null) {
            if (tokens.size() != 1) {
                throw new SyncException(ErrorCode.SYNC_FORBIDDEN, "the signed URL is not valid for this segment (§5.4)");
            }
            return signed(parts, segmentId, tokens.get(0), headers, served);
        }
        Identity identity = runtime.authenticate(parts, RequestCredentials.of(headers, uri), "segment");
        who[0] = identity.partition();
        who[1] = identity.actorId();
        byte[] bytes = parts.segmentDownload().download(identity, segmentId, headers.getHeaderString("X-Syncular-Scopes"));
        served[0] = bytes.length;
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

    private static Response signed(SyncRuntime.Parts parts, String segmentId, String token, HttpHeaders headers,
                                   long[] served) throws IOException {
        syncular.jakarta.sync.SegmentDownload.Signed signed = parts.segmentDownload().downloadSigned(segmentId, token);
        served[0] = signed.bytes().length;
        // public: the URL is the grant, so a CDN may serve it to whoever holds it, but never past the token's expiry
        long maxAge = Math.max(0, signed.expSeconds() - Math.floorDiv(parts.clock().nowMs(), 1000));
        String cacheControl = "public, max-age=" + maxAge;
        String etag = "\"" + segmentId + "\"";
        String ifNoneMatch = headers.getHeaderString("If-None-Match");
        if (ifNoneMatch != null && (ifNoneMatch.trim().equals("*") || java.util.Arrays.stream(ifNoneMatch.split(","))
                .map(String::trim).anyMatch(etag::equals))) {
            return Response.notModified().header("ETag", etag).header("Cache-Control", cacheControl)
                    .header("Vary", SIGNED_VARY).build();
        }
        return HttpBodies.respond(Response.ok().type("application/octet-stream"), signed.bytes(),
                        headers.getHeaderString(HttpHeaders.ACCEPT_ENCODING), SIGNED_VARY)
                .header("ETag", etag).header("Cache-Control", cacheControl).build();
    }
}

package syncular.jakarta.web;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import jakarta.ws.rs.core.UriInfo;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.sync.BlobDownload;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * {@code PUT}, {@code GET <mount>/blobs/{blobId}} and {@code POST <mount>/blobs/{blobId}/upload-grant} (SPEC §1.1,
 * §5.9.3, §5.9.5). Both directions stream: the request body goes to the store as it arrives, the download is written
 * from the store a chunk page at a time, after every check has passed. No container transaction: the store runs each
 * piece as a statement of its own, so neither a slow client nor a large blob holds a connection or meets the JTA
 * timeout. With an {@code st} query parameter the route is the URL host of the native scheme (§5.9.3, §5.9.5): the
 * token is the whole grant and no credentials are read.
 */
@Path("blobs/{blobId}")
public class BlobResource {
    /** §5.9.5: the response varies with who asks (authorization per request) and with the transport encoding. */
    static final String VARY = "Authorization, Accept-Encoding";
    /** A signed URL's answer depends on nothing but the URL and the encoding. */
    static final String SIGNED_VARY = "Accept-Encoding";
    private static final BigDecimal MAX_SAFE = BigDecimal.valueOf(9_007_199_254_740_991L);

    @Inject
    SyncRuntime runtime;

    private SyncRuntime.Parts parts() {
        return runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
    }

    private static Identity identity(SyncRuntime.Parts parts, HttpHeaders headers, UriInfo uri) {
        return parts.authenticator().authenticate(RequestCredentials.of(headers, uri))
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "authentication required"));
    }

    /** The one {@code st} of a signed URL, or null without one; a repeated {@code st} is no URL of ours. */
    private static String token(UriInfo uri, String refusal) {
        List<String> tokens = uri.getQueryParameters().get("st");
        if (tokens == null) return null;
        if (tokens.size() != 1) throw new SyncException(ErrorCode.BLOB_FORBIDDEN, refusal);
        return tokens.get(0);
    }

    @PUT
    @Consumes(MediaType.WILDCARD)
    public Response upload(@PathParam("blobId") String blobId, InputStream body, @Context HttpHeaders headers,
                           @Context UriInfo uri) throws IOException {
        SyncRuntime.Parts parts = parts();
        String token = token(uri, "the upload URL is not valid for this blob (§5.9.3)");
        Identity identity = token == null ? identity(parts, headers, uri) : null;
        String enc = headers.getHeaderString(HttpHeaders.CONTENT_ENCODING);
        enc = enc == null ? "identity" : enc.trim().toLowerCase(Locale.ROOT);
        boolean gzip = enc.equals("gzip") || enc.equals("x-gzip");
        if (!gzip && !enc.equals("identity")) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "unsupported Content-Encoding");
        }
        // §5.9.3: the content address is over the decoded bytes; a declared length counts them only unencoded
        long declared = gzip ? -1 : headers.getLength();
        MediaType type = headers.getMediaType();
        String mediaType = type == null ? null : type.getType() + "/" + type.getSubtype();
        InputStream in = gzip ? new GZIPInputStream(body, 64 * 1024) : body;
        if (token == null) {
            parts.blobUpload().upload(identity, blobId, in, declared, mediaType);
        } else {
            parts.blobUpload().uploadSigned(blobId, token, in, declared, mediaType);
        }
        return Response.ok().header("Cache-Control", "no-store").build();
    }

    @POST
    @Path("upload-grant")
    @Consumes(MediaType.WILDCARD)
    public Response grant(@PathParam("blobId") String blobId, String body, @Context HttpHeaders headers,
                          @Context UriInfo uri) {
        SyncRuntime.Parts parts = parts();
        Identity identity = identity(parts, headers, uri);
        Long byteLength = null;
        try {
            if (Json.parse(body) instanceof Map<?, ?> m && m.get("byteLength") instanceof Number number) {
                BigDecimal n = new BigDecimal(number.toString());
                if (n.signum() >= 0 && n.stripTrailingZeros().scale() <= 0 && n.compareTo(MAX_SAFE) <= 0) {
                    byteLength = n.longValueExact();
                }
            }
        } catch (Json.JsonException | ArithmeticException e) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "the upload-grant body is not JSON (§5.9.3)");
        }
        return Response.ok(parts.blobUpload().grant(identity, blobId, byteLength), MediaType.APPLICATION_JSON_TYPE)
                .header("Cache-Control", "no-store").build();
    }

    @GET
    public Response download(@PathParam("blobId") String blobId, @Context HttpHeaders headers, @Context UriInfo uri) {
        SyncRuntime.Parts parts = parts();
        String token = token(uri, "the signed URL is not valid for this blob (§5.9.5)");
        if (token != null) {
            BlobDownload.Signed signed = parts.blobDownload().downloadSigned(blobId, token);
            // the URL is the grant and the bytes are immutable: a CDN may keep them, but never past the token's expiry
            long maxAge = Math.max(0, signed.expSeconds() - Math.floorDiv(parts.clock().nowMs(), 1000));
            return bytes(parts, signed.blob(), headers, "public, max-age=" + maxAge, SIGNED_VARY);
        }
        Identity identity = identity(parts, headers, uri);
        BlobDownload.Answer answer = parts.blobDownload().download(identity, blobId);
        if (answer instanceof BlobDownload.Url url) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("url", url.issued().url());
            json.put("urlExpiresAtMs", url.issued().urlExpiresAtMs());
            // a bearer grant: no cache may keep it for someone else
            return Response.ok(Json.write(json), MediaType.APPLICATION_JSON_TYPE).header("Cache-Control", "no-store")
                    .header("Vary", VARY).build();
        }
        return bytes(parts, ((BlobDownload.Inline) answer).blob(), headers, "private, max-age=0", VARY);
    }

    private static Response bytes(SyncRuntime.Parts parts, BlobStore.BlobInfo info, HttpHeaders headers,
                                  String cacheControl, String vary) {
        String etag = "\"" + info.blobId() + "\"";
        String ifNoneMatch = headers.getHeaderString("If-None-Match");
        if (ifNoneMatch != null && (ifNoneMatch.trim().equals("*") || java.util.Arrays.stream(ifNoneMatch.split(","))
                .map(String::trim).anyMatch(etag::equals))) {
            return Response.notModified().header("ETag", etag).header("Cache-Control", cacheControl)
                    .header("Vary", vary).build();
        }
        BlobStore store = parts.blobs();
        StreamingOutput bytes = out -> store.writeTo(info.partition(), info.blobId(), out);
        return Response.ok(bytes)
                .type(contentType(info.mediaType()))
                .header(HttpHeaders.CONTENT_LENGTH, info.byteLength())
                .header("ETag", etag).header("Cache-Control", cacheControl).header("Vary", vary)
                // the media type is the uploader's claim (§5.9.5 persists it): a browser must never sniff or run it
                .header("X-Content-Type-Options", "nosniff")
                .header("Content-Security-Policy", "sandbox; default-src 'none'")
                .build();
    }

    /** §5.9.5: the stored media type if there is one the header can carry, else octet-stream. */
    private static MediaType contentType(String stored) {
        if (stored != null) {
            try {
                return MediaType.valueOf(stored);
            } catch (IllegalArgumentException e) {
                // not a media type after all: the bytes are still served, as opaque ones
            }
        }
        return MediaType.APPLICATION_OCTET_STREAM_TYPE;
    }
}

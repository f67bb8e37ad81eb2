package syncular.jakarta.web;

import jakarta.ws.rs.core.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipException;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/** HTTP body compression (SPEC §1.3): gzip request bodies in, gzip responses out per Accept-Encoding. */
final class HttpBodies {
    private HttpBodies() { }

    /**
     * Reads a request body, gunzipping it when {@code Content-Encoding: gzip}; the cap counts decoded bytes, so a
     * small compressed bomb cannot expand past it.
     */
    static byte[] readRequest(InputStream body, String contentEncoding, long maxBytes) throws IOException {
        InputStream in = body;
        String enc = contentEncoding == null ? "identity" : contentEncoding.trim().toLowerCase(Locale.ROOT);
        if (enc.equals("gzip") || enc.equals("x-gzip")) {
            try {
                in = new GZIPInputStream(body);
            } catch (ZipException e) {
                throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "the request body is not valid gzip");
            }
        } else if (!enc.equals("identity")) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "unsupported Content-Encoding");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[16 * 1024];
        long total = 0;
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                total += n;
                if (total > maxBytes) {
                    throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                            "the request body exceeds syncular.limits.max-request-bytes (" + maxBytes + ")");
                }
                out.write(buf, 0, n);
            }
        } catch (ZipException e) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "the request body is not valid gzip");
        }
        return out.toByteArray();
    }

    /** Sets the entity, gzipped when the client accepts gzip (ids always hash the uncompressed bytes, §5.8). */
    static Response.ResponseBuilder respond(Response.ResponseBuilder builder, byte[] body, String acceptEncoding,
                                            String vary) throws IOException {
        builder.header("Vary", vary);
        if (acceptsGzip(acceptEncoding)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 4 + 64);
            try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
                gz.write(body);
            }
            return builder.entity(out.toByteArray()).header("Content-Encoding", "gzip");
        }
        return builder.entity(body);
    }

    private static boolean isZero(String q) {
        try {
            return Double.parseDouble(q) == 0;
        } catch (NumberFormatException e) {
            return false; // a malformed weight is not a refusal
        }
    }

    static boolean acceptsGzip(String acceptEncoding) {
        if (acceptEncoding == null) return false;
        for (String part : acceptEncoding.split(",")) {
            String[] p = part.trim().split(";");
            if (!p[0].trim().equalsIgnoreCase("gzip")) continue;
            for (int i = 1; i < p.length; i++) {
                String q = p[i].trim();
                if (q.startsWith("q=") && isZero(q.substring(2).trim())) return false;
            }
            return true;
        }
        return false;
    }
}

package syncular.jakarta.web;

import jakarta.ws.rs.core.Response;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipException;
import io.airlift.compress.zstd.ZstdOutputStream;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/** HTTP body compression (SPEC §1.3): gzip request bodies in, zstd or gzip responses out per Accept-Encoding. */
final class HttpBodies {
    private HttpBodies() { }

    /**
     * Reads a request body, gunzipping it when {@code Content-Encoding: gzip}; the cap counts decoded bytes, so a
     * small compressed bomb cannot expand past it. A body that is not a whole gzip stream (empty, the magic alone, a
     * header without data, cut short, a bad checksum) is 400 {@code sync.invalid_request}; a body over the cap is
     * HTTP 413 with the same JSON shape (the catalog has no request-size code, SPEC §10.2).
     */
    static byte[] readRequest(InputStream body, String contentEncoding, long maxBytes) throws IOException {
        String enc = contentEncoding == null ? "identity" : contentEncoding.trim().toLowerCase(Locale.ROOT);
        boolean gzip = enc.equals("gzip") || enc.equals("x-gzip");
        if (!gzip && !enc.equals("identity")) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "unsupported Content-Encoding");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[16 * 1024];
        long total = 0;
        try {
            // GZIPInputStream reads the header in its constructor: an empty or short body fails right there
            InputStream in = gzip ? new GZIPInputStream(body) : body;
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
                if (total > maxBytes) {
                    throw new RequestTooLarge(maxBytes);
                }
                out.write(buf, 0, n);
            }
        } catch (ZipException | EOFException e) {
            // EOFException only from the gzip framing: a plain body simply ends (read returns -1)
            if (!gzip) throw e;
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "the request body is not valid gzip");
        }
        return out.toByteArray();
    }

    /**
     * A body over {@code syncular.limits.max-request-bytes}: HTTP 413 with the §10.1 body of
     * {@code sync.invalid_request} ({@link ErrorMappers}). Not a SyncException, whose status is its code's 400.
     */
    static final class RequestTooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final long maxBytes;

        RequestTooLarge(long maxBytes) {
            super("the request body exceeds syncular.limits.max-request-bytes (" + maxBytes + ")", null, false, false);
            this.maxBytes = maxBytes;
        }
    }

    /** Bodies below this size go out as they are: the coding's framing would outweigh its gain (REF). */
    static final int MIN_COMPRESS_BYTES = 1024;

    /**
     * Sets the entity, compressed per {@code Accept-Encoding} in the preference order zstd, gzip (§1.3, §5.8; REF
     * content-encoding.ts). Segment ids always name the uncompressed bytes; nothing compressed is ever stored.
     */
    static Response.ResponseBuilder respond(Response.ResponseBuilder builder, byte[] body, String acceptEncoding,
                                            String vary) throws IOException {
        Encoded e = encode(body, acceptEncoding);
        builder.header("Vary", vary).entity(e.bytes());
        return e.coding() == null ? builder : builder.header("Content-Encoding", e.coding());
    }

    /** A body as sent: its bytes and its content coding ({@code null} = identity). */
    record Encoded(byte[] bytes, String coding) { }

    static Encoded encode(byte[] body, String acceptEncoding) throws IOException {
        String coding = coding(body.length, acceptEncoding);
        if (coding == null) return new Encoded(body, null);
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length / 4 + 64);
        try (OutputStream encoded = encoding(out, coding)) {
            encoded.write(body);
        }
        return new Encoded(out.toByteArray(), coding);
    }

    /**
     * The content coding a body of {@code size} bytes goes out in for {@code acceptEncoding}: zstd, then gzip, or
     * {@code null} for identity (a body below {@link #MIN_COMPRESS_BYTES}, or neither coding accepted).
     */
    static String coding(long size, String acceptEncoding) {
        if (size < MIN_COMPRESS_BYTES) return null;
        if (accepts(acceptEncoding, "zstd")) return "zstd";
        return accepts(acceptEncoding, "gzip") ? "gzip" : null;
    }

    /**
     * A stream that writes what it is given to {@code out} in {@code coding} ({@link #coding}: zstd or gzip). Closing
     * it ends the coding and flushes {@code out} but leaves it open: a container's response stream stays the
     * container's.
     */
    static OutputStream encoding(OutputStream out, String coding) throws IOException {
        OutputStream kept = new FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException { out.write(b, off, len); }

            @Override
            public void close() throws IOException { out.flush(); }
        };
        return "zstd".equals(coding) ? new ZstdOutputStream(kept) : new GZIPOutputStream(kept, 64 * 1024);
    }

    private static boolean isZero(String q) {
        try {
            return Double.parseDouble(q) == 0;
        } catch (NumberFormatException e) {
            return false; // a malformed weight is not a refusal
        }
    }

    /** Does {@code Accept-Encoding} accept {@code coding} with a weight above zero? */
    static boolean accepts(String acceptEncoding, String coding) {
        if (acceptEncoding == null) return false;
        for (String part : acceptEncoding.split(",")) {
            String[] p = part.trim().split(";");
            if (!p[0].trim().equalsIgnoreCase(coding)) continue;
            for (int i = 1; i < p.length; i++) {
                String q = p[i].trim();
                if (q.startsWith("q=") && isZero(q.substring(2).trim())) return false;
            }
            return true;
        }
        return false;
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;

/**
 * What {@link BlobsIT} (PostgreSQL store) and {@link BlobsS3IT} (S3 store) share: the attachments schema, the
 * conformance-host reset, upload, download and push over HTTP, and the 200 MiB round trip with the server's old
 * generation watched. A static helper rather than a superclass: Arquillian's {@code @Deployment} must stay on each
 * IT class itself.
 */
final class BlobsItSupport {
    static final String SCHEMA = """
            {"version":1,"tables":[{"name":"attachments","primaryKey":"id","columns":[
              {"name":"id","type":"string","nullable":false},
              {"name":"project_id","type":"string","nullable":false},
              {"name":"title","type":"string","nullable":false},
              {"name":"file","type":"blob_ref","nullable":true}],
             "scopes":[{"pattern":"project:{project_id}"}]}]}""";
    static final TableSchema ATTACHMENTS = SchemaCompiler.compile(SCHEMA).table("attachments").orElseThrow();
    /** The deployments' cap: room for the 200 MiB blob, and a gzip bomb still goes past it. */
    static final long CAP = 220L * 1024 * 1024;
    static final long LARGE = 200L * 1024 * 1024;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private BlobsItSupport() { }

    /** A reset to the attachments schema in partition {@code blob-p}, with {@code owner} holding project p1. */
    static HttpResponse<String> reset(URL base) throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.conformance(base, "POST", "reset",
                "{\"schema\":" + SCHEMA + ",\"partition\":\"blob-p\",\"nowMs\":1782993600000}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(200, It.conformance(base, "PUT", "actors/owner/allowed", "{\"project_id\":[\"p1\"]}").statusCode());
        return r;
    }

    static String idOf(byte[] bytes) throws Exception {
        return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private static URI blob(URL base, String blobId) throws Exception { return base.toURI().resolve("blobs/" + blobId); }

    static HttpResponse<String> put(URL base, String actor, String blobId, byte[] body, String... headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(blob(base, blobId)).timeout(Duration.ofSeconds(60))
                .header("X-Syncular-Actor", actor).header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) b.headers(headers);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> get(URL base, String actor, String blobId, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(blob(base, blobId)).timeout(Duration.ofSeconds(60))
                .header("X-Syncular-Actor", actor).GET();
        if (headers.length > 0) b.headers(headers);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** One push of one attachment row as {@code actor}; its PUSH_RESULT. */
    static PushResult push(URL base, String actor, String commitId, String rowId, String project, String fileRef)
            throws Exception {
        byte[] payload = RowCodec.encode(ATTACHMENTS.descriptors(), new Object[] {rowId, project, "t", fileRef});
        SyncTestClient client = new SyncTestClient(base.toURI(), "client-" + actor, "unused", actor);
        ResponseMessage m = client.send(new RequestMessage(1, List.of(new ReqHeader("client-" + actor, 1),
                new PushCommit(commitId, List.of(PushCommit.Operation.upsert("attachments", rowId, null, payload))))));
        return m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast).findFirst()
                .orElseThrow();
    }

    /** {@code length} bytes of a deterministic sequence, generated as they are read. */
    static InputStream generated(long length) {
        return new InputStream() {
            long at;

            @Override
            public int read() { return at < length ? (int) ((at++ * 131) & 0xff) : -1; }

            @Override
            public int read(byte[] b, int off, int len) {
                if (at >= length) return -1;
                int n = (int) Math.min(len, length - at);
                for (int i = 0; i < n; i++) b[off + i] = (byte) ((at++ * 131) & 0xff);
                return n;
            }
        };
    }

    /**
     * A {@link #LARGE} blob up through the server, referenced by a push, and down again, unchanged, with the server's
     * old generation grown by less than half of it (a blob held whole would be one array there). {@code stored}
     * checks the store after the upload, given the blob's id.
     */
    static void largeBlobRoundTrip(URL base, String label, Consumer<String> stored) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = generated(LARGE)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
        }
        String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
        assertEquals(200, HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("it-heap/start"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode());

        long started = System.nanoTime();
        HttpResponse<String> up = HTTP.send(HttpRequest.newBuilder(blob(base, id)).timeout(Duration.ofMinutes(10))
                .header("X-Syncular-Actor", "owner").header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.fromPublisher(
                        HttpRequest.BodyPublishers.ofInputStream(() -> generated(LARGE)), LARGE))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, up.statusCode(), up.body());
        long uploaded = System.nanoTime();
        stored.accept(id);
        assertEquals(PushResult.Status.APPLIED, push(base, "owner", "c-big", "big", "p1",
                new BlobRef(id, LARGE, "application/octet-stream", "big.bin").toJson()).status());

        HttpResponse<InputStream> down = HTTP.send(HttpRequest.newBuilder(blob(base, id))
                .timeout(Duration.ofMinutes(10)).header("X-Syncular-Actor", "owner").GET().build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, down.statusCode());
        MessageDigest back = MessageDigest.getInstance("SHA-256");
        long count = 0;
        try (InputStream in = down.body()) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) >= 0; count += n) back.update(buf, 0, n);
        }
        long downloaded = System.nanoTime();
        assertEquals(LARGE, count);
        assertEquals(id, "sha256:" + HexFormat.of().formatHex(back.digest()), "the bytes came back unchanged");

        String heap = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("it-heap/stop"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).body();
        System.out.println("[" + label + "] " + It.server() + ": 200 MiB up in " + (uploaded - started) / 1_000_000
                + " ms, down in " + (downloaded - uploaded) / 1_000_000 + " ms; heap " + heap);
        long oldBaseline = Long.parseLong(heap.replaceAll(".*\"oldBaseline\":(-?\\d+).*", "$1"));
        long oldPeak = Long.parseLong(heap.replaceAll(".*\"oldPeak\":(-?\\d+).*", "$1"));
        if (oldPeak >= 0) {
            assertTrue(oldPeak - oldBaseline < 100L * 1024 * 1024,
                    "the old generation grew by less than half the blob: nothing held it whole; " + heap);
        }
    }
}

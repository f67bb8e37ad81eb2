package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
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
 * Blobs on a deployed server (SPEC §5.9, B.13), over real HTTP: upload → push a row referencing it → download by an
 * actor of the row's scope, refused to an actor of another scope, 404 for an unknown blob, the content-address and
 * size checks, a push naming a blob never uploaded, and a 200 MiB blob streamed up and down through the server while
 * its old generation is watched (a blob held whole would be one array there).
 */
@ExtendWith(ArquillianExtension.class)
class BlobsIT extends DatabaseIsolation {
    static final String SCHEMA = """
            {"version":1,"tables":[{"name":"attachments","primaryKey":"id","columns":[
              {"name":"id","type":"string","nullable":false},
              {"name":"project_id","type":"string","nullable":false},
              {"name":"title","type":"string","nullable":false},
              {"name":"file","type":"blob_ref","nullable":true}],
             "scopes":[{"pattern":"project:{project_id}"}]}]}""";
    static final TableSchema ATTACHMENTS = SchemaCompiler.compile(SCHEMA).table("attachments").orElseThrow();
    /** The deployment's cap: room for the 200 MiB blob, and a gzip bomb still goes past it. */
    static final long CAP = 220L * 1024 * 1024;
    static final long LARGE = 200L * 1024 * 1024;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("blobs"), Map.of("syncular.conformance-host", "true",
                "syncular.blobs.max-bytes", Long.toString(CAP))).addClasses(ItHeapProbe.class);
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.conformance(base, "POST", "reset",
                "{\"schema\":" + SCHEMA + ",\"partition\":\"blob-p\",\"nowMs\":1782993600000}");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"blobs\""), r.body());
        assertEquals(200, It.conformance(base, "PUT", "actors/owner/allowed", "{\"project_id\":[\"p1\"]}").statusCode());
        assertEquals(200, It.conformance(base, "PUT", "actors/intruder/allowed", "{\"project_id\":[\"p2\"]}")
                .statusCode());
    }

    private URI blob(String blobId) throws Exception { return base.toURI().resolve("blobs/" + blobId); }

    static String idOf(byte[] bytes) throws Exception {
        return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    private HttpResponse<String> put(String actor, String blobId, byte[] body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(blob(blobId)).timeout(Duration.ofSeconds(60))
                .header("X-Syncular-Actor", actor).header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) b.headers(headers);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<byte[]> get(String actor, String blobId, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(blob(blobId)).timeout(Duration.ofSeconds(60))
                .header("X-Syncular-Actor", actor).GET();
        if (headers.length > 0) b.headers(headers);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** One push of one upsert as {@code actor}; its PUSH_RESULT. */
    private PushResult push(String actor, String commitId, String rowId, String project, String fileRef)
            throws Exception {
        byte[] payload = RowCodec.encode(ATTACHMENTS.descriptors(), new Object[] {rowId, project, "t", fileRef});
        SyncTestClient client = new SyncTestClient(base.toURI(), "client-" + actor, "unused", actor);
        ResponseMessage m = client.send(new RequestMessage(1, List.of(new ReqHeader("client-" + actor, 1),
                new PushCommit(commitId, List.of(PushCommit.Operation.upsert("attachments", rowId, null, payload))))));
        return m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast).findFirst()
                .orElseThrow();
    }

    private static String code(String body) { return body.replaceAll("(?s).*\"code\":\"([^\"]+)\".*", "$1"); }

    @Test
    void uploadPushDownloadAndTheRefusalsAroundIt() throws Exception {
        byte[] bytes = "an attached file".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals(200, put("owner", id, bytes).statusCode());
        assertEquals(200, put("intruder", id, bytes).statusCode(), "a re-upload is idempotent, by anyone (§5.9.3)");

        HttpResponse<byte[]> unreferenced = get("owner", id);
        assertEquals(403, unreferenced.statusCode(), "no row references it yet: nobody may read it");
        assertEquals("blob.forbidden", code(new String(unreferenced.body(), StandardCharsets.UTF_8)));

        String ref = new BlobRef(id, bytes.length, "text/plain", "note.txt").toJson();
        assertEquals(PushResult.Status.APPLIED, push("owner", "c1", "att1", "p1", ref).status());

        HttpResponse<byte[]> got = get("owner", id);
        assertEquals(200, got.statusCode());
        assertArrayEquals(bytes, got.body());
        assertEquals("\"" + id + "\"", got.headers().firstValue("ETag").orElseThrow());
        assertTrue(got.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain"));
        assertEquals("private, max-age=0", got.headers().firstValue("Cache-Control").orElseThrow());
        assertEquals("nosniff", got.headers().firstValue("X-Content-Type-Options").orElseThrow());
        assertEquals(304, get("owner", id, "If-None-Match", "\"" + id + "\"").statusCode());

        HttpResponse<byte[]> intruder = get("intruder", id);
        assertEquals(403, intruder.statusCode(), "another scope: a blobId is never a capability (§5.9.5)");
        assertEquals("blob.forbidden", code(new String(intruder.body(), StandardCharsets.UTF_8)));
        assertTrue(intruder.headers().firstValue("Content-Type").orElseThrow().startsWith("application/json"));

        HttpResponse<byte[]> unknown = get("owner", "sha256:" + "0".repeat(64));
        assertEquals(404, unknown.statusCode());
        assertEquals("blob.not_found", code(new String(unknown.body(), StandardCharsets.UTF_8)));

        HttpResponse<byte[]> anonymous = HTTP.send(HttpRequest.newBuilder(blob(id)).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(401, anonymous.statusCode());
    }

    @Test
    void theContentAddressAndTheCapAreChecked() throws Exception {
        byte[] bytes = "the real bytes".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        HttpResponse<String> mismatch = put("owner", id, "other bytes".getBytes(StandardCharsets.UTF_8));
        assertEquals(400, mismatch.statusCode(), mismatch.body());
        assertEquals("blob.hash_mismatch", code(mismatch.body()));
        assertEquals(400, put("owner", "not-a-blob-id", bytes).statusCode());

        // nothing was stored: a push naming it is refused, and so is a download
        PushResult refused = push("owner", "c1", "att1", "p1", new BlobRef(id, bytes.length, null, null).toJson());
        assertEquals(PushResult.Status.REJECTED, refused.status());
        PushResult.OpError error = assertInstanceOf(PushResult.OpError.class, refused.results().get(0));
        assertEquals("blob.not_found", error.code());
        assertEquals(404, get("owner", id).statusCode());

        // the streamed count: a gzip body whose decoded bytes pass the cap, sent as ~220 KiB
        ByteArrayOutputStream bomb = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bomb)) {
            byte[] zeros = new byte[1 << 20];
            for (long n = 0; n <= CAP; n += zeros.length) gz.write(zeros);
        }
        HttpResponse<String> tooLarge = put("owner", id, bomb.toByteArray(), "Content-Encoding", "gzip");
        assertEquals(413, tooLarge.statusCode(), tooLarge.body());
        assertEquals("blob.too_large", code(tooLarge.body()));

        // gzip is decoded before hashing (§5.9.3)
        ByteArrayOutputStream gzipped = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(gzipped)) {
            gz.write(bytes);
        }
        assertEquals(200, put("owner", id, gzipped.toByteArray(), "Content-Encoding", "gzip").statusCode());

        // the grant: no presign store, so {}; the cap applies to the declared length up front
        HttpResponse<String> grant = It.postBodyWithHeader(base.toURI().resolve("blobs/" + id + "/upload-grant"),
                "application/json", "{\"byteLength\":14}", "X-Syncular-Actor", "owner");
        assertEquals(200, grant.statusCode(), grant.body());
        assertEquals("{}", grant.body());
        HttpResponse<String> overCap = It.postBodyWithHeader(base.toURI().resolve("blobs/" + id + "/upload-grant"),
                "application/json", "{\"byteLength\":" + (CAP + 1) + "}", "X-Syncular-Actor", "owner");
        assertEquals(413, overCap.statusCode(), overCap.body());
        assertEquals("blob.too_large", code(overCap.body()));
    }

    /** {@link #LARGE} bytes of a deterministic sequence, generated as they are read. */
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

    @Test
    void a200MiBBlobStreamsUpAndDownWithTheServersOldGenerationFlat() throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = generated(LARGE)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
        }
        String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
        assertEquals(200, HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("it-heap/start"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode());

        long started = System.nanoTime();
        HttpResponse<String> up = HTTP.send(HttpRequest.newBuilder(blob(id)).timeout(Duration.ofMinutes(10))
                .header("X-Syncular-Actor", "owner").header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.fromPublisher(
                        HttpRequest.BodyPublishers.ofInputStream(() -> generated(LARGE)), LARGE))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, up.statusCode(), up.body());
        long uploaded = System.nanoTime();
        assertEquals(PushResult.Status.APPLIED, push("owner", "c1", "big", "p1",
                new BlobRef(id, LARGE, "application/octet-stream", "big.bin").toJson()).status());

        HttpResponse<InputStream> down = HTTP.send(HttpRequest.newBuilder(blob(id)).timeout(Duration.ofMinutes(10))
                .header("X-Syncular-Actor", "owner").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
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
        System.out.println("[BlobsIT] " + It.server() + ": 200 MiB up in " + (uploaded - started) / 1_000_000
                + " ms, down in " + (downloaded - uploaded) / 1_000_000 + " ms; heap " + heap);
        long oldBaseline = Long.parseLong(heap.replaceAll(".*\"oldBaseline\":(-?\\d+).*", "$1"));
        long oldPeak = Long.parseLong(heap.replaceAll(".*\"oldPeak\":(-?\\d+).*", "$1"));
        if (oldPeak >= 0) {
            assertTrue(oldPeak - oldBaseline < 100L * 1024 * 1024,
                    "the old generation grew by less than half the blob: nothing held it whole; " + heap);
        }
    }
}

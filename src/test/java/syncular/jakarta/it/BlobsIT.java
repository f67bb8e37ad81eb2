package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushResult;

/**
 * Blobs on a deployed server (SPEC §5.9, B.13), over real HTTP: upload → push a row referencing it → download by an
 * actor of the row's scope, refused to an actor of another scope, 404 for an unknown blob, the content-address and
 * size checks, a push naming a blob never uploaded, and a 200 MiB blob streamed up and down through the server while
 * its old generation is watched (a blob held whole would be one array there).
 */
@ExtendWith(ArquillianExtension.class)
class BlobsIT extends DatabaseIsolation {
    private static final long CAP = BlobsItSupport.CAP;
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
        HttpResponse<String> r = BlobsItSupport.reset(base);
        assertTrue(r.body().contains("\"blobs\""), r.body());
        assertEquals(200, It.conformance(base, "PUT", "actors/intruder/allowed", "{\"project_id\":[\"p2\"]}")
                .statusCode());
    }

    private URI blob(String blobId) throws Exception { return base.toURI().resolve("blobs/" + blobId); }

    private static String idOf(byte[] bytes) throws Exception { return BlobsItSupport.idOf(bytes); }

    private HttpResponse<String> put(String actor, String blobId, byte[] body, String... headers) throws Exception {
        return BlobsItSupport.put(base, actor, blobId, body, headers);
    }

    private HttpResponse<byte[]> get(String actor, String blobId, String... headers) throws Exception {
        return BlobsItSupport.get(base, actor, blobId, headers);
    }

    private PushResult push(String actor, String commitId, String rowId, String project, String fileRef)
            throws Exception {
        return BlobsItSupport.push(base, actor, commitId, rowId, project, fileRef);
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

    @Test
    void a200MiBBlobStreamsUpAndDownWithTheServersOldGenerationFlat() throws Exception {
        BlobsItSupport.largeBlobRoundTrip(base, "BlobsIT", id -> { });
    }
}

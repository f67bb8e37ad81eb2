package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;

/**
 * Blobs on a deployed server with {@code syncular.blobs.store=s3}: the AWS SDK inside Payara and WildFly, talking to
 * a real S3 API server (S3Proxy) that this IT JVM starts on a free loopback port and names in the deployment's
 * {@code syncular.blobs.s3.*}. Upload → the object under its documented key, no temporary key left, nothing in the
 * database → push referencing it → download; a mismatching upload leaves the bucket unchanged; and a 200 MiB blob
 * through the server to the bucket and back with the server's old generation flat. The full list of refusals is
 * {@link BlobsIT}'s on the PostgreSQL store.
 */
@ExtendWith(ArquillianExtension.class)
class BlobsS3IT extends DatabaseIsolation {
    /** Per run, so that Payara's and WildFly's deployments never see each other's objects. */
    static final String PREFIX = "it-" + System.nanoTime();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static S3Client s3;

    @Deployment(testable = false)
    static WebArchive deployment() {
        URI endpoint = S3ProxySupport.endpoint();
        return It.withConfig(It.war("blobs-s3"), Map.of("syncular.conformance-host", "true",
                "syncular.blobs.max-bytes", Long.toString(BlobsIT.CAP),
                "syncular.blobs.store", "s3",
                "syncular.blobs.s3.bucket", S3ProxySupport.BUCKET,
                "syncular.blobs.s3.prefix", PREFIX,
                "syncular.blobs.s3.endpoint", endpoint.toString(),
                "syncular.blobs.s3.path-style", "true",
                "syncular.blobs.s3.access-key", S3ProxySupport.ACCESS_KEY,
                "syncular.blobs.s3.secret-key", S3ProxySupport.SECRET_KEY)).addClasses(ItHeapProbe.class);
    }

    @ArquillianResource
    URL base;

    @BeforeAll
    static void client() {
        s3 = S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder()).region(Region.US_EAST_1)
                .endpointOverride(S3ProxySupport.endpoint()).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        S3ProxySupport.ACCESS_KEY, S3ProxySupport.SECRET_KEY))).build();
    }

    @AfterAll
    static void close() { s3.close(); }

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.conformance(base, "POST", "reset",
                "{\"schema\":" + BlobsIT.SCHEMA + ",\"partition\":\"blob-p\",\"nowMs\":1782993600000}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(200, It.conformance(base, "PUT", "actors/owner/allowed", "{\"project_id\":[\"p1\"]}").statusCode());
    }

    private HttpResponse<String> put(String blobId, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + blobId)).timeout(Duration.ofSeconds(60))
                .header("X-Syncular-Actor", "owner").header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** One push of one attachment row referencing {@code ref}, as the owner; its PUSH_RESULT. */
    private PushResult push(String commitId, String rowId, BlobRef ref) throws Exception {
        byte[] payload = RowCodec.encode(BlobsIT.ATTACHMENTS.descriptors(), new Object[] {rowId, "p1", "t",
                ref.toJson()});
        ResponseMessage m = new SyncTestClient(base.toURI(), "client-owner", "unused", "owner").send(
                new RequestMessage(1, List.of(new ReqHeader("client-owner", 1), new PushCommit(commitId,
                        List.of(PushCommit.Operation.upsert("attachments", rowId, null, payload))))));
        return m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast).findFirst()
                .orElseThrow();
    }

    private List<String> keys() {
        return s3.listObjectsV2(b -> b.bucket(S3ProxySupport.BUCKET).prefix(PREFIX + "/")).contents().stream()
                .map(S3Object::key).map(k -> k.substring(PREFIX.length() + 1)).sorted().toList();
    }

    @Test
    void blobsGoToTheBucketAndComeBackThroughTheServer() throws Exception {
        byte[] bytes = "stored in the bucket".getBytes(StandardCharsets.UTF_8);
        String id = BlobsIT.idOf(bytes);
        HttpResponse<String> uploaded = put(id, bytes);
        assertEquals(200, uploaded.statusCode(), uploaded.body());

        HeadObjectResponse head = s3.headObject(b -> b.bucket(S3ProxySupport.BUCKET).key(PREFIX + "/blobs/blob-p/" + id));
        assertEquals(bytes.length, head.contentLength());
        assertTrue(head.metadata().get("media-type").startsWith("text/plain"), head.metadata().toString());
        assertTrue(keys().stream().noneMatch(k -> k.startsWith("uploads/")), "no temporary key outlives it: " + keys());
        try (Connection c = It.jdbc(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT to_regclass('sync_blobs') IS NULL")) {
            rs.next();
            assertTrue(rs.getBoolean(1), "the PostgreSQL blob tables were never created: no byte went there");
        }

        assertEquals(PushResult.Status.APPLIED, push("c1", "att1", new BlobRef(id, bytes.length, "text/plain",
                "note.txt")).status(), "the push-time existence check asked the bucket");

        HttpResponse<byte[]> got = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + id))
                .timeout(Duration.ofSeconds(60)).header("X-Syncular-Actor", "owner").GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, got.statusCode());
        assertArrayEquals(bytes, got.body());

        List<String> before = keys();
        byte[] other = "other bytes".getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> mismatch = put(BlobsIT.idOf("never sent".getBytes(StandardCharsets.UTF_8)), other);
        assertEquals(400, mismatch.statusCode(), mismatch.body());
        assertEquals(before, keys(), "a refused upload leaves the bucket as it was");
    }

    @Test
    void a200MiBBlobStreamsThroughTheServerToTheBucketAndBackWithTheOldGenerationFlat() throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = BlobsIT.generated(BlobsIT.LARGE)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
        }
        String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
        assertEquals(200, HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("it-heap/start"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode());

        long started = System.nanoTime();
        HttpResponse<String> up = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + id))
                .timeout(Duration.ofMinutes(10)).header("X-Syncular-Actor", "owner")
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.fromPublisher(
                        HttpRequest.BodyPublishers.ofInputStream(() -> BlobsIT.generated(BlobsIT.LARGE)), BlobsIT.LARGE))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, up.statusCode(), up.body());
        long uploaded = System.nanoTime();
        assertEquals(BlobsIT.LARGE, s3.headObject(b -> b.bucket(S3ProxySupport.BUCKET)
                .key(PREFIX + "/blobs/blob-p/" + id)).contentLength(), "a multipart upload, copied whole");
        assertEquals(PushResult.Status.APPLIED, push("c-big", "big", new BlobRef(id, BlobsIT.LARGE,
                "application/octet-stream", "big.bin")).status());

        HttpResponse<InputStream> down = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + id))
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
        assertEquals(BlobsIT.LARGE, count);
        assertEquals(id, "sha256:" + HexFormat.of().formatHex(back.digest()), "the bytes came back unchanged");

        String heap = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("it-heap/stop"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).body();
        System.out.println("[BlobsS3IT] " + It.server() + ": 200 MiB up in " + (uploaded - started) / 1_000_000
                + " ms, down in " + (downloaded - uploaded) / 1_000_000 + " ms; heap " + heap);
        long oldBaseline = Long.parseLong(heap.replaceAll(".*\"oldBaseline\":(-?\\d+).*", "$1"));
        long oldPeak = Long.parseLong(heap.replaceAll(".*\"oldPeak\":(-?\\d+).*", "$1"));
        if (oldPeak >= 0) {
            assertTrue(oldPeak - oldBaseline < 100L * 1024 * 1024,
                    "the old generation grew by less than half the blob: nothing held it whole; " + heap);
        }
    }
}

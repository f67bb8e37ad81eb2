package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
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
 * database → push referencing it → download; a mismatching upload leaves the bucket unchanged. The
 * full scenario list (and the 200 MiB stream) is {@link BlobsIT}'s on the PostgreSQL store.
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
                "syncular.blobs.store", "s3",
                "syncular.blobs.s3.bucket", S3ProxySupport.BUCKET,
                "syncular.blobs.s3.prefix", PREFIX,
                "syncular.blobs.s3.endpoint", endpoint.toString(),
                "syncular.blobs.s3.path-style", "true",
                "syncular.blobs.s3.access-key", S3ProxySupport.ACCESS_KEY,
                "syncular.blobs.s3.secret-key", S3ProxySupport.SECRET_KEY));
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

        byte[] payload = RowCodec.encode(BlobsIT.ATTACHMENTS.descriptors(), new Object[] {"att1", "p1", "t",
                new BlobRef(id, bytes.length, "text/plain", "note.txt").toJson()});
        ResponseMessage m = new SyncTestClient(base.toURI(), "client-owner", "unused", "owner").send(
                new RequestMessage(1, List.of(new ReqHeader("client-owner", 1), new PushCommit("c1",
                        List.of(PushCommit.Operation.upsert("attachments", "att1", null, payload))))));
        PushResult pushed = m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast)
                .findFirst().orElseThrow();
        assertEquals(PushResult.Status.APPLIED, pushed.status(), "the push-time existence check asked the bucket");

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
}

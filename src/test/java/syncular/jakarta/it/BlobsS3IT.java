package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
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
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushResult;

/**
 * Blobs on a deployed server with {@code syncular.blobs.store=s3}: the AWS SDK inside Payara and WildFly, talking to
 * a real S3 API server (S3Proxy) that this IT JVM starts on a free loopback port and names in the deployment's
 * {@code syncular.blobs.s3.*}. Upload → the object under its documented key, no temporary key left, nothing in the
 * database → push referencing it → download; a mismatching upload leaves the bucket unchanged; and a 200 MiB blob
 * through the server to the bucket and back with the server's old generation flat. The full list of refusals is
 * {@link BlobsIT}'s on the PostgreSQL store; what both share is {@link BlobsItSupport}.
 */
@ExtendWith(ArquillianExtension.class)
class BlobsS3IT extends DatabaseIsolation {
    /** Per run, so that Payara's and WildFly's deployments never see each other's objects. */
    static final String PREFIX = "it-" + System.nanoTime();
    private static S3Client s3;

    @Deployment(testable = false)
    static WebArchive deployment() {
        URI endpoint = S3ProxySupport.endpoint();
        return It.withConfig(It.war("blobs-s3"), Map.of("syncular.conformance-host", "true",
                "syncular.blobs.max-bytes", Long.toString(BlobsItSupport.CAP),
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
    static void client() { s3 = S3ProxySupport.client(); }

    @AfterAll
    static void close() { s3.close(); }

    @BeforeEach
    void reset() throws Exception { BlobsItSupport.reset(base); }

    private List<String> keys() {
        return s3.listObjectsV2(b -> b.bucket(S3ProxySupport.BUCKET).prefix(PREFIX + "/")).contents().stream()
                .map(S3Object::key).map(k -> k.substring(PREFIX.length() + 1)).sorted().toList();
    }

    @Test
    void blobsGoToTheBucketAndComeBackThroughTheServer() throws Exception {
        byte[] bytes = "stored in the bucket".getBytes(StandardCharsets.UTF_8);
        String id = BlobsItSupport.idOf(bytes);
        HttpResponse<String> uploaded = BlobsItSupport.put(base, "owner", id, bytes);
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

        assertEquals(PushResult.Status.APPLIED, BlobsItSupport.push(base, "owner", "c1", "att1", "p1",
                new BlobRef(id, bytes.length, "text/plain", "note.txt").toJson()).status(),
                "the push-time existence check asked the bucket");

        HttpResponse<byte[]> got = BlobsItSupport.get(base, "owner", id);
        assertEquals(200, got.statusCode());
        assertArrayEquals(bytes, got.body());

        List<String> before = keys();
        byte[] other = "other bytes".getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> mismatch = BlobsItSupport.put(base, "owner",
                BlobsItSupport.idOf("never sent".getBytes(StandardCharsets.UTF_8)), other);
        assertEquals(400, mismatch.statusCode(), mismatch.body());
        assertEquals(before, keys(), "a refused upload leaves the bucket as it was");
    }

    @Test
    void a200MiBBlobStreamsThroughTheServerToTheBucketAndBackWithTheOldGenerationFlat() throws Exception {
        BlobsItSupport.largeBlobRoundTrip(base, "BlobsS3IT", id -> assertEquals(BlobsItSupport.LARGE,
                s3.headObject(b -> b.bucket(S3ProxySupport.BUCKET).key(PREFIX + "/blobs/blob-p/" + id))
                        .contentLength(), "a multipart upload, copied whole"));
    }
}

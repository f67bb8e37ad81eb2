package syncular.jakarta.storage.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static syncular.jakarta.storage.BlobStreams.idOf;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.BlobPresigner.Presigned;
import syncular.jakarta.storage.BlobStore;

/**
 * The S3 store's SigV4 presigned URLs (SPEC §5.9.3, §5.9.5) against a real S3 API server (S3Proxy, in this JVM),
 * fetched and written the way a client does: a bare HTTP request carrying nothing but the URL. A direct PUT lands at
 * the direct key and is no blob until adopted; adoption checks the content address, so bytes that do not hash to
 * their id are never present; S3 itself refuses a PUT of another length than the granted one, a tampered URL and an
 * expired one.
 */
class S3BlobPresignTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static URI endpoint;
    private static S3Client raw;

    @BeforeAll
    static void server() {
        endpoint = S3ProxySupport.endpoint();
        raw = S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder()).region(Region.US_EAST_1)
                .endpointOverride(endpoint).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        S3ProxySupport.ACCESS_KEY, S3ProxySupport.SECRET_KEY)))
                .build();
    }

    @AfterAll
    static void close() { raw.close(); }

    private static List<String> keys(String prefix) {
        List<String> out = new ArrayList<>();
        raw.listObjectsV2Paginator(b -> b.bucket(S3ProxySupport.BUCKET).prefix(prefix + "/")).contents()
                .forEach((S3Object o) -> out.add(o.key().substring(prefix.length() + 1)));
        return out;
    }

    private static HttpResponse<byte[]> put(String url, byte[] body, String type) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).PUT(HttpRequest.BodyPublishers.ofByteArray(body));
        if (type != null) b.header("Content-Type", type);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static HttpResponse<byte[]> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String query(String url, String name) {
        for (String pair : URI.create(url).getRawQuery().split("&")) {
            int eq = pair.indexOf('=');
            if (pair.substring(0, eq).equals(name)) return URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        }
        return null;
    }

    @Test
    void aPresignedPutIsAdoptedAtReferenceAndServedByAPresignedGet() throws Exception {
        String prefix = S3ProxySupport.prefix("presign");
        try (S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix))) {
            byte[] bytes = "straight to the bucket".getBytes(StandardCharsets.UTF_8);
            String id = idOf(bytes);
            Presigned up = s.presignPut("p 1", id, bytes.length, 600_000);
            assertTrue(URI.create(up.url()).getPath().endsWith("/direct/" + S3BlobStore.segment("p 1") + "/" + id),
                    "the signed key embeds the blobId: " + up.url());
            assertTrue(query(up.url(), "X-Amz-SignedHeaders").contains("content-length"),
                    "the granted length is signed: " + up.url());
            assertTrue(up.expiresAtMs() > System.currentTimeMillis() + 500_000, "about the 10 minutes asked for");

            HttpResponse<byte[]> stored = put(up.url(), bytes, "text/plain");
            assertEquals(200, stored.statusCode(), () -> new String(stored.body(), StandardCharsets.UTF_8));
            assertTrue(s.find("p 1", id).isEmpty(), "bytes PUT through a URL are not a blob before their check");
            assertEquals(Set.of(), s.present("p 1", List.of(id)));

            assertEquals(Set.of(id), s.adoptDirectUploads("p 1", List.of(id), 5_000));
            BlobStore.BlobInfo info = s.find("p 1", id).orElseThrow();
            assertEquals(bytes.length, info.byteLength());
            assertEquals("text/plain", info.mediaType(), "the PUT's own type is the blob's media type");
            assertEquals(5_000, info.uploadedAtMs());
            assertTrue(keys(prefix).stream().noneMatch(k -> k.startsWith("direct/")), keys(prefix).toString());
            assertEquals(Set.of(), s.adoptDirectUploads("p 1", List.of(id), 6_000), "nothing left to adopt");

            Presigned down = s.presignGet("p 1", id, 600_000);
            HttpResponse<byte[]> got = get(down.url());
            assertEquals(200, got.statusCode());
            assertArrayEquals(bytes, got.body());
            assertEquals(id, idOf(got.body()));
            assertEquals(404, get(s.presignGet("p 2", id, 600_000).url()).statusCode(),
                    "another partition's key holds nothing");
        }
    }

    @Test
    void directBytesThatDoNotHashToTheirIdAreNeverABlob() throws Exception {
        String prefix = S3ProxySupport.prefix("presign-bad");
        try (S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix))) {
            byte[] honest = "the bytes the id names".getBytes(StandardCharsets.UTF_8);
            byte[] forged = "other bytes, same size".getBytes(StandardCharsets.UTF_8);
            assertEquals(honest.length, forged.length);
            String id = idOf(honest);
            assertEquals(200, put(s.presignPut("p", id, forged.length, 600_000).url(), forged, null).statusCode());
            assertEquals(Set.of(), s.adoptDirectUploads("p", List.of(id), 1_000));
            assertTrue(s.find("p", id).isEmpty(), "a poisoned upload is not present");
            assertEquals(List.of(), keys(prefix), "and its bytes are gone");

            // the honest upload afterwards is adopted as usual
            assertEquals(200, put(s.presignPut("p", id, honest.length, 600_000).url(), honest, null).statusCode());
            assertEquals(Set.of(id), s.adoptDirectUploads("p", List.of(id), 2_000));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertTrue(s.writeTo("p", id, out));
            assertArrayEquals(honest, out.toByteArray());
        }
    }

    @Test
    void s3RefusesAnotherLengthATamperedUrlAndAGetOfAnUploadKey() throws Exception {
        String prefix = S3ProxySupport.prefix("presign-tamper");
        try (S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix))) {
            byte[] bytes = "sixteen bytes!!!".getBytes(StandardCharsets.UTF_8);
            String id = idOf(bytes);
            String url = s.presignPut("p", id, bytes.length, 600_000).url();
            assertEquals(403, put(url, "longer than granted".getBytes(StandardCharsets.UTF_8), null).statusCode(),
                    "a body of another length than the signed one");
            String other = idOf("x".getBytes(StandardCharsets.UTF_8));
            String otherKey = url.replace(id.substring("sha256:".length()), other.substring("sha256:".length()));
            assertTrue(!otherKey.equals(url));
            assertEquals(403, put(otherKey, bytes, null).statusCode(), "another key under the signature");
            String expires = query(url, "X-Amz-Expires");
            assertEquals(403, put(url.replace("X-Amz-Expires=" + expires, "X-Amz-Expires=604800"), bytes, null)
                    .statusCode(), "a longer expiry");
            assertEquals(List.of(), keys(prefix), "nothing was written");

            assertEquals(200, put(url, bytes, null).statusCode());
            String getOfPut = s.presignGet("p", id, 600_000).url();
            assertEquals(404, get(getOfPut).statusCode(), "a download URL names the blob key, never the direct key");
        }
    }

    @Test
    @Timeout(30)
    void anExpiredPresignedUrlIsRefusedByS3() throws Exception {
        String prefix = S3ProxySupport.prefix("presign-expiry");
        try (S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix))) {
            byte[] bytes = "short-lived".getBytes(StandardCharsets.UTF_8);
            String id = idOf(bytes);
            Presigned up = s.presignPut("p", id, bytes.length, 1_000);
            // S3 enforces the expiry on its own clock, with no skew allowance (§5.4): wait until it has passed there
            while (System.currentTimeMillis() <= up.expiresAtMs() + 1_000) Thread.sleep(100);
            assertEquals(403, put(up.url(), bytes, null).statusCode(), "expired");
            assertFalse(keys(prefix).stream().anyMatch(k -> k.startsWith("direct/")), keys(prefix).toString());
        }
    }

    @Test
    void thePurgeRemovesDirectUploadsNeverReferenced() throws Exception {
        String prefix = S3ProxySupport.prefix("presign-purge");
        try (S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix))) {
            byte[] bytes = "abandoned".getBytes(StandardCharsets.UTF_8);
            String id = idOf(bytes);
            assertEquals(200, put(s.presignPut("p", id, bytes.length, 600_000).url(), bytes, null).statusCode());
            assertEquals(0, s.purgeIncompleteUploads(0), "younger than the cutoff: kept");
            assertEquals(1, s.purgeIncompleteUploads(System.currentTimeMillis() + 3_600_000));
            assertEquals(List.of(), keys(prefix));
            assertEquals(Set.of(), s.adoptDirectUploads("p", List.of(id), 1_000));
        }
    }
}

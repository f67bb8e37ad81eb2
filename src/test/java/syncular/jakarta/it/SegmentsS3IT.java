package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import java.util.ArrayList;
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
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.Subscription;

/**
 * Bootstrap segments in S3 on a deployed server ({@code syncular.segments.store=s3}, {@code s3.presign=true}): the
 * SDK inside Payara and WildFly talking to a real S3 API server (S3Proxy) this IT JVM starts. A bit-3 client's
 * descriptors carry SigV4 presigned GETs of {@code seg/sha256/<hex>}, fetched from the bucket with no credentials
 * (SPEC §5.4 delegated presign), and the publications record sits beside them; a client without bit 3 downloads
 * through the direct endpoint, which reads the bucket. When the segment's TTL passes (the conformance host's virtual
 * clock), the direct download is 404 {@code sync.segment_expired}, and the client recovers as §5.4/§5.5 say: a fresh
 * pull re-publishes and hands out fresh descriptors, whose URL and direct download serve again.
 */
@ExtendWith(ArquillianExtension.class)
class SegmentsS3IT extends DatabaseIsolation {
    /** Per run, so that Payara's and WildFly's deployments never see each other's objects. */
    static final String PREFIX = "it-segments-" + System.nanoTime();
    private static final String SCHEMA = """
            {"version":1,"tables":[{"name":"notes","primaryKey":"id","columns":[
              {"name":"id","type":"string","nullable":false},
              {"name":"list_id","type":"string","nullable":false},
              {"name":"title","type":"string","nullable":false}],
             "scopes":[{"pattern":"list:{list_id}"}]}]}""";
    private static final TableSchema NOTES = SchemaCompiler.compile(SCHEMA).table("notes").orElseThrow();
    private static final long SEGMENT_TTL_MS = 60_000;
    private static final int ROWS = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    private static final String SCOPES = "{\"list_id\":[\"l1\"]}";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static S3Client s3;

    @Deployment(testable = false)
    static WebArchive deployment() {
        URI endpoint = S3ProxySupport.endpoint();
        return It.withConfig(It.war("segments-s3"), Map.of("syncular.conformance-host", "true",
                "syncular.segments.store", "s3",
                "syncular.segments.s3.presign", "true",
                "syncular.segments.s3.presign-ttl-ms", "600000",
                "syncular.segments.s3.bucket", S3ProxySupport.BUCKET,
                "syncular.segments.s3.prefix", PREFIX,
                "syncular.segments.s3.endpoint", endpoint.toString(),
                "syncular.segments.s3.path-style", "true",
                "syncular.segments.s3.access-key", S3ProxySupport.ACCESS_KEY,
                "syncular.segments.s3.secret-key", S3ProxySupport.SECRET_KEY));
    }

    @ArquillianResource
    URL base;

    @BeforeAll
    static void client() { s3 = S3ProxySupport.client(); }

    @AfterAll
    static void close() { s3.close(); }

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.conformance(base, "POST", "reset", "{\"schema\":" + SCHEMA
                + ",\"partition\":\"seg-p\",\"nowMs\":1782993600000,\"limits\":{\"inlineSegmentMaxBytes\":1,"
                + "\"segmentTtlMs\":" + SEGMENT_TTL_MS + "}}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(200, It.conformance(base, "PUT", "actors/alice/allowed", "{\"list_id\":[\"l1\"]}").statusCode());
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ops.add(PushCommit.Operation.upsert("notes", "n" + i, null,
                    RowCodec.encode(NOTES.descriptors(), new Object[] {"n" + i, "l1", "note " + i})));
        }
        HttpResponse<byte[]> pushed = sync(List.of(new ReqHeader("seeder", 1), new PushCommit("seed-five", ops)));
        assertEquals(200, pushed.statusCode(), () -> new String(pushed.body(), StandardCharsets.UTF_8));
    }

    private HttpResponse<byte[]> sync(List<RequestFrame> frames) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("sync")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/vnd.syncular.sync.v2").header("X-Syncular-Actor", "alice")
                .POST(HttpRequest.BodyPublishers.ofByteArray(RequestEncoder.encode(new RequestMessage(1, frames))))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A first pull of the subscription (cursor -1), in pages of two rows: its SEGMENT_REFs. */
    private List<SegmentRef> bootstrap(String client, int accept) throws Exception {
        HttpResponse<byte[]> r = sync(List.of(new ReqHeader(client, 1), new PullHeader(0, 2, 50, accept),
                new Subscription("s", "notes", Map.of("list_id", List.of("l1")), null, -1, null)));
        assertEquals(200, r.statusCode(), () -> new String(r.body(), StandardCharsets.UTF_8));
        List<SegmentRef> refs = ResponseDecoder.decode(r.body()).frames().stream()
                .filter(f -> f instanceof SegmentRef).map(SegmentRef.class::cast).toList();
        assertEquals(3, refs.size(), "five rows in pages of two, by reference");
        return refs;
    }

    /** A bare GET: nothing but the URL. */
    private static HttpResponse<byte[]> fetch(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The direct endpoint (§5.5), as the conformance host's actor with the subscription's scopes. */
    private HttpResponse<byte[]> direct(String segmentId) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("segments/" + segmentId))
                .timeout(Duration.ofSeconds(60)).header("X-Syncular-Actor", "alice")
                .header("X-Syncular-Scopes", SCOPES).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String hex(String segmentId) { return segmentId.substring("sha256:".length()); }

    @Test
    void aBit3ClientFetchesItsSegmentsStraightFromTheBucketByPresignedUrl() throws Exception {
        for (SegmentRef ref : bootstrap("c-presign", ROWS | PullHeader.ACCEPT_SIGNED_URLS)) {
            String object = S3ProxySupport.endpoint() + "/" + S3ProxySupport.BUCKET + "/" + PREFIX + "/seg/sha256/"
                    + hex(ref.segmentId());
            assertTrue(ref.url().startsWith(object + "?"), "§5.4: the bucket's signed key embeds the id: " + ref.url());
            assertTrue(ref.url().contains("X-Amz-Expires=600"), "the configured 10 min TTL: " + ref.url());
            assertNotNull(ref.urlExpiresAtMs());
            HttpResponse<byte[]> got = fetch(ref.url());
            assertEquals(200, got.statusCode(), () -> new String(got.body(), StandardCharsets.UTF_8));
            assertEquals(ref.segmentId(), SegmentStore.segmentId(got.body()), "§5.1: the object is the bytes verbatim");

            String record = s3.getObjectAsBytes(b -> b.bucket(S3ProxySupport.BUCKET)
                    .key(PREFIX + "/rec/sha256/" + hex(ref.segmentId()) + ".json")).asUtf8String();
            assertTrue(record.contains("\"partition\":\"seg-p\"") && record.contains(ref.scopeDigest()), record);

            String signature = ref.url().replaceAll(".*X-Amz-Signature=([0-9a-f]+).*", "$1");
            String tampered = ref.url().replace(signature, (signature.charAt(0) == 'a' ? "b" : "a")
                    + signature.substring(1));
            assertEquals(403, fetch(tampered).statusCode(), "the bucket checks the signature");
        }
        try (Connection c = It.jdbc(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT to_regclass('sync_segments') IS NULL")) {
            rs.next();
            assertTrue(rs.getBoolean(1), "the PostgreSQL segment tables were never created: no byte went there");
        }
        for (SegmentRef ref : bootstrap("c-plain", ROWS)) {
            assertNull(ref.url(), "§4.2/§5.4: no bit 3, no url");
            HttpResponse<byte[]> got = direct(ref.segmentId());
            assertEquals(200, got.statusCode(), () -> new String(got.body(), StandardCharsets.UTF_8));
            assertEquals(ref.segmentId(), SegmentStore.segmentId(got.body()), "the direct endpoint read the bucket");
        }
    }

    @Test
    void anExpiredSegmentIsSegmentExpiredAndAFreshPullRecovers() throws Exception {
        List<SegmentRef> first = bootstrap("c-expiry", ROWS | PullHeader.ACCEPT_SIGNED_URLS);
        SegmentRef ref = first.get(0);
        assertEquals(200, direct(ref.segmentId()).statusCode());

        assertEquals(200, It.conformance(base, "POST", "clock/advance", "{\"ms\":" + (SEGMENT_TTL_MS + 1) + "}")
                .statusCode());
        HttpResponse<byte[]> expired = direct(ref.segmentId());
        String body = new String(expired.body(), StandardCharsets.UTF_8);
        assertEquals(404, expired.statusCode(), body);
        assertTrue(body.contains("\"sync.segment_expired\""), body);

        // §5.5 recovery: the next pull re-authorizes, re-publishes and mints fresh descriptors
        List<SegmentRef> fresh = bootstrap("c-expiry", ROWS | PullHeader.ACCEPT_SIGNED_URLS);
        assertEquals(first.stream().map(SegmentRef::segmentId).toList(),
                fresh.stream().map(SegmentRef::segmentId).toList(), "the same content, so the same addresses");
        for (SegmentRef again : fresh) {
            assertTrue(again.urlExpiresAtMs() >= first.get(0).urlExpiresAtMs(), "a fresh URL");
            HttpResponse<byte[]> byUrl = fetch(again.url());
            assertEquals(200, byUrl.statusCode());
            HttpResponse<byte[]> byEndpoint = direct(again.segmentId());
            assertEquals(200, byEndpoint.statusCode(), () -> new String(byEndpoint.body(), StandardCharsets.UTF_8));
            assertArrayEquals(byUrl.body(), byEndpoint.body(), "one content address, one body, both paths");
        }
        assertFalse(fresh.isEmpty());
    }
}

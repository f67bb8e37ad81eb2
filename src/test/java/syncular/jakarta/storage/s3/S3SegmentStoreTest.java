package syncular.jakarta.storage.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.SegmentPresigner;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.SegmentStoreContractTest;
import syncular.jakarta.wire.Json;

/**
 * The S3 segment store on a real S3 API server (S3Proxy, in this JVM): the PostgreSQL store's contract, plus the
 * seeds' key layout read off the bucket (bytes verbatim under {@code seg/sha256/}, the publications record under
 * {@code rec/sha256/}, reuse pointers under {@code find/}) and the §5.4 presigned GET fetched with no credentials.
 */
class S3SegmentStoreTest extends SegmentStoreContractTest {
    private static final String PREFIX = S3ProxySupport.prefix("segments");
    private static S3SegmentStore store;
    private static S3Client raw;
    private static final List<S3SegmentStore> opened = new java.util.ArrayList<>();

    @BeforeAll
    static void open() {
        store = S3SegmentStore.open(S3ProxySupport.settings(S3ProxySupport.endpoint(), PREFIX), 0);
        raw = S3ProxySupport.client();
    }

    @AfterAll
    static void close() {
        store.close();
        opened.forEach(S3SegmentStore::close);
        raw.close();
    }

    @Override
    protected SegmentStore store() { return store; }

    @Override
    protected SegmentStore cachedStore(long cacheBytes) {
        S3SegmentStore cached = S3SegmentStore.open(S3ProxySupport.settings(S3ProxySupport.endpoint(), PREFIX),
                cacheBytes);
        opened.add(cached);
        return cached;
    }

    @Override
    protected void overwriteStoredBytes(String segmentId) {
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(PREFIX + "/seg/sha256/" + segmentId.substring(7)),
                RequestBody.fromBytes(new byte[] {0}));
    }

    private static String object(String key) {
        return raw.getObjectAsBytes(b -> b.bucket(S3ProxySupport.BUCKET).key(PREFIX + "/" + key)).asUtf8String();
    }

    @Test
    void theBucketHoldsTheSeedsKeyLayout() {
        String p = partition("layout");
        byte[] bytes = ("layout " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        String hex = id.substring("sha256:".length());
        store.publish(new SegmentStore.Publication(id, key(p, "e1", "d1", null), bytes.length, 3, 1_000, 2_000), bytes);
        store.publish(new SegmentStore.Publication(id, key(p, "e1", "d2", "row-4"), bytes.length, 3, 1_500, 2_500),
                bytes);

        assertArrayEquals(bytes, raw.getObjectAsBytes(b -> b.bucket(S3ProxySupport.BUCKET)
                .key(PREFIX + "/seg/sha256/" + hex)).asByteArray(), "the object body is exactly the bytes");
        Map<?, ?> record = (Map<?, ?>) Json.parse(object("rec/sha256/" + hex + ".json"));
        assertEquals(id, record.get("segmentId"));
        assertEquals(List.of("d1", "d2"), record.get("scopeDigests"), "the compatibility view, first published first");
        List<?> publications = (List<?>) record.get("publications");
        assertEquals(2, publications.size(), "oldest first, one per context");
        Map<?, ?> first = (Map<?, ?>) publications.get(0);
        assertEquals(p, first.get("partition"));
        assertEquals("rows", first.get("mediaType"));
        assertEquals(null, first.get("rowCursor"));
        assertEquals("row-4", ((Map<?, ?>) publications.get(1)).get("rowCursor"));

        List<String> pointers = raw.listObjectsV2(b -> b.bucket(S3ProxySupport.BUCKET).prefix(PREFIX + "/find/"))
                .contents().stream().map(S3Object::key).toList();
        String pointer = store.pointerKey(key(p, "e1", "d1", null));
        assertTrue(pointers.contains(pointer), pointers.toString());
        assertEquals(id, ((Map<?, ?>) Json.parse(object(pointer.substring(PREFIX.length() + 1)))).get("segmentId"));
    }

    @Test
    void aReusePointerWhoseBytesAreGoneIsAMiss() {
        String p = partition("lifecycle");
        byte[] bytes = ("lifecycle " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        store.publish(new SegmentStore.Publication(id, key(p, "e", "d", null), bytes.length, 1, 0, 1_000), bytes);
        // a bucket lifecycle rule removed the bytes while record and pointer stayed
        raw.deleteObject(b -> b.bucket(S3ProxySupport.BUCKET).key(PREFIX + "/seg/sha256/" + id.substring(7)));
        assertTrue(store.find(key(p, "e", "d", null), 10).isEmpty());
        store.publish(new SegmentStore.Publication(id, key(p, "e", "d", null), bytes.length, 1, 20, 1_000), bytes);
        assertArrayEquals(bytes, store.bytes(id).orElseThrow(), "the next publish put them back");
        assertEquals(id, store.find(key(p, "e", "d", null), 30).orElseThrow().segmentId());
    }

    @Test
    void aPresignedGetServesTheBytesWithNoCredentialsAndNothingElse() throws Exception {
        String p = partition("presign");
        byte[] bytes = ("presigned " + p).getBytes(StandardCharsets.UTF_8);
        String id = SegmentStore.segmentId(bytes);
        store.publish(new SegmentStore.Publication(id, key(p, "e", "d", null), bytes.length, 1, 0, 1_000), bytes);

        SegmentPresigner.Presigned signed = store.presignGet(id, 600_000);
        URI url = URI.create(signed.url());
        assertTrue(url.getPath().endsWith("/seg/sha256/" + id.substring(7)), "§5.4: the signed key embeds the id");
        String query = url.getRawQuery();
        Instant signedAt = java.time.LocalDateTime.parse(param(query, "X-Amz-Date"),
                DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")).toInstant(ZoneOffset.UTC);
        assertEquals("600", param(query, "X-Amz-Expires"));
        assertEquals(signedAt.toEpochMilli() + 600_000, signed.expiresAtMs(), "the expiry the provider enforces");

        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<byte[]> got = http.send(HttpRequest.newBuilder(url).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, got.statusCode());
        assertArrayEquals(bytes, got.body());

        String other = SegmentStore.segmentId("another".getBytes(StandardCharsets.UTF_8)).substring(7);
        HttpResponse<byte[]> moved = http.send(HttpRequest.newBuilder(URI.create(signed.url()
                .replace(id.substring(7), other))).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(403, moved.statusCode(), "the signature covers the key: no other object with it");
    }

    private static String param(String query, String name) {
        for (String pair : query.split("&")) {
            if (pair.startsWith(name + "=")) return pair.substring(name.length() + 1);
        }
        throw new AssertionError(name + " missing from " + query);
    }
}

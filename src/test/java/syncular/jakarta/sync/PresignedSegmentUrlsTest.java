package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.storage.s3.S3SegmentStore;
import syncular.jakarta.wire.SegmentRef;

/**
 * SPEC §5.4 delegated presign through the publishing path: a page published into the S3 store for a client that set
 * accept bit 3 is described with the bucket's presigned GET, which serves exactly the described bytes with no
 * credentials; without bit 3 the descriptor carries no URL (§4.2 gating). Real S3 API server (S3Proxy).
 */
class PresignedSegmentUrlsTest {
    private static S3SegmentStore store;

    @BeforeAll
    static void open() {
        store = S3SegmentStore.open(S3ProxySupport.settings(S3ProxySupport.endpoint(),
                S3ProxySupport.prefix("presign-publish")), 0);
    }

    @AfterAll
    static void close() { store.close(); }

    private static PullProcessor.SegmentRequest request(boolean bit3) {
        return new PullProcessor.SegmentRequest("p", "e", "tasks", 1, "digest", 7, 2, null, null, bit3);
    }

    @Test
    void aBit3DescriptorCarriesTheBucketsPresignedGetAndOthersNone() throws Exception {
        SegmentPublishing publishing = new SegmentPublishing(store, () -> 1_000, 60_000, Optional.empty(),
                Optional.of(new PresignedSegmentUrls(store, 300_000)), ServerEvents.NONE);
        byte[] bytes = "two rows, encoded".getBytes(StandardCharsets.UTF_8);

        SegmentRef ref = (SegmentRef) publishing.publish(request(true), bytes);
        assertEquals(SegmentStore.segmentId(bytes), ref.segmentId());
        assertTrue(ref.url().contains("/seg/sha256/" + ref.segmentId().substring(7) + "?"), ref.url());
        assertTrue(ref.url().contains("X-Amz-Expires=300"), ref.url());
        HttpResponse<byte[]> got = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(ref.url()))
                .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, got.statusCode());
        assertArrayEquals(bytes, got.body());
        assertEquals(1, store.publications(ref.segmentId(), "p", "e").size(), "published before it was described");

        SegmentRef plain = (SegmentRef) publishing.publish(request(false), bytes);
        assertNull(plain.url());
        assertNull(plain.urlExpiresAtMs());
    }
}

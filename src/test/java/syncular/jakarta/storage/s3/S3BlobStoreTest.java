package syncular.jakarta.storage.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static syncular.jakarta.storage.BlobStreams.idOf;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.BlobStore.PutOutcome;
import syncular.jakarta.storage.BlobStoreContractTest;

/**
 * The S3 blob store on a real S3 API server (S3Proxy, in this JVM), under a key prefix of its own per test: the blob
 * store contract with "holds exactly" read off the bucket's keys and open multipart uploads, plus the key layout and
 * the sweep's listing of an entry whose blob is gone.
 */
class S3BlobStoreTest extends BlobStoreContractTest {
    private static URI endpoint;
    private static S3Client raw;
    private final List<S3BlobStore> opened = new ArrayList<>();
    private String prefix;

    @BeforeAll
    static void server() {
        endpoint = S3ProxySupport.endpoint();
        raw = S3ProxySupport.client();
    }

    @AfterAll
    static void closeClient() { raw.close(); }

    @AfterEach
    void closeStores() { opened.forEach(S3BlobStore::close); }

    private S3BlobStore store(String under) {
        S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(endpoint, under));
        opened.add(s);
        return s;
    }

    @Override
    protected BlobStore emptyStore() {
        prefix = S3ProxySupport.prefix("blobs");
        return store(prefix);
    }

    /** Every object key under {@code prefix}, and every multipart upload still open there. */
    private static List<String> keys(String prefix) {
        List<String> out = new ArrayList<>();
        raw.listObjectsV2Paginator(b -> b.bucket(S3ProxySupport.BUCKET).prefix(prefix + "/")).contents()
                .forEach((S3Object o) -> out.add(o.key().substring(prefix.length() + 1)));
        raw.listMultipartUploads(b -> b.bucket(S3ProxySupport.BUCKET).prefix(prefix + "/")).uploads()
                .forEach(u -> out.add("multipart:" + u.key().substring(prefix.length() + 1)));
        return out;
    }

    @Override
    protected int[] sizesAroundPieceBoundaries() {
        return new int[] {0, 1, S3BlobStore.PART_BYTES, S3BlobStore.PART_BYTES + 1, S3BlobStore.PART_BYTES * 2 + 7};
    }

    /** A multipart upload: two parts were sent before the end of the body is read. */
    @Override
    protected int severalPiecesBytes() { return S3BlobStore.PART_BYTES * 2 + 1000; }

    /** The blob's object and its sweep entry under its upload time, per blob, and no other key or open upload. */
    @Override
    protected void assertHoldsExactly(String partition, Map<String, Long> uploadedAtMsByBlobId, String message) {
        Set<String> expected = new HashSet<>();
        uploadedAtMsByBlobId.forEach((id, at) -> {
            expected.add("blobs/" + partition + "/" + id);
            expected.add("uploaded/%019d/%s/%s".formatted(at, partition, id));
        });
        List<String> keys = keys(prefix);
        assertEquals(expected, Set.copyOf(keys), message);
        assertEquals(expected.size(), keys.size(), message + ": " + keys);
    }

    /** An object under {@code uploads/} and an open multipart upload there, as a process that died leaves them. */
    @Override
    protected int abandonUploads(long startedAtMs) {
        String uploads = "%s/uploads/%019d/".formatted(prefix, startedAtMs);
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(uploads + "u-dead"),
                RequestBody.fromBytes(new byte[] {0}));
        raw.createMultipartUpload(b -> b.bucket(S3ProxySupport.BUCKET).key(uploads + "u-dead-multipart"));
        return 2;
    }

    @Override
    protected List<String> largeRoundTripMain() {
        return List.of(LargeBlobRoundTrip.class.getName(), endpoint.toString(), S3ProxySupport.prefix("large"));
    }

    /** The child JVM: opens the store on the same server and round-trips {@link #LARGE} bytes through the SDK. */
    static final class LargeBlobRoundTrip {
        public static void main(String[] args) throws Exception {
            S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(URI.create(args[0]), args[1]));
            System.out.println(roundTripLarge(s));
        }
    }

    @Test
    void theKeyLayoutIsPerPartitionContentAddressedAndEncoded() throws Exception {
        String layout = S3ProxySupport.prefix("layout");
        S3BlobStore s = store("/" + layout + "/");
        byte[] bytes = "laid out".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        for (String partition : new String[] {"tenant 1", "../a/b", ""}) {
            assertEquals(PutOutcome.STORED, s.put(partition, id, new ByteArrayInputStream(bytes), 100, null, 42));
            assertArrayEquals(bytes, read(s, partition, id));
        }
        assertEquals(Set.of("blobs/tenant+1/" + id, "blobs/%2E%2E%2Fa%2Fb/" + id, "blobs/%/" + id,
                "uploaded/0000000000000000042/tenant+1/" + id, "uploaded/0000000000000000042/%2E%2E%2Fa%2Fb/" + id,
                "uploaded/0000000000000000042/%/" + id), Set.copyOf(keys(layout)));
        assertEquals(Set.of("../a/b", "", "tenant 1"), Set.copyOf(s.uploadedBefore(43, null, 10).stream()
                .map(BlobStore.BlobInfo::partition).toList()), "the listing decodes the partition back");
    }

    /** A crash between writing a blob's sweep entry and copying the blob in leaves an entry with no blob. */
    @Test
    void theSweepListingDropsAnEntryWhoseBlobIsGone() throws Exception {
        byte[] kept = "three".getBytes();
        store.put("p", idOf(kept), new ByteArrayInputStream(kept), 10, null, 102);
        String dangling = "uploaded/0000000000000000090/p/sha256:" + "2".repeat(64);
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(prefix + "/" + dangling), RequestBody.empty());
        assertEquals(List.of(), store.uploadedBefore(101, null, 10));
        assertFalse(keys(prefix).contains(dangling));
        assertHoldsExactly("p", Map.of(idOf(kept), 102L), "the listing removed the entry and nothing else");
        assertTrue(store.find("p", idOf(kept)).isPresent());
    }
}

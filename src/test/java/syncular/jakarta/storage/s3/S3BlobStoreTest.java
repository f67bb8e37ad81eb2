package syncular.jakarta.storage.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static syncular.jakarta.storage.BlobStreams.generated;
import static syncular.jakarta.storage.BlobStreams.idOf;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.BlobStore.PutOutcome;
import syncular.jakarta.storage.BlobStreams;

/**
 * The S3 blob store on a real S3 API server (S3Proxy, in this JVM): the PostgreSQL store's contract (content
 * addressing, idempotent re-upload, the size cap, nothing visible after a failed upload, per-partition keys, the
 * sweep's primitives) with "nothing stored" read off the bucket's keys and open multipart uploads, plus the key
 * layout, and a blob far larger than a small heap streamed both ways in a JVM of its own with {@code -Xmx64m}.
 */
class S3BlobStoreTest {
    private static URI endpoint;
    private static S3Client raw;

    @BeforeAll
    static void server() {
        endpoint = S3ProxySupport.endpoint();
        raw = S3ProxySupport.client();
    }

    @AfterAll
    static void close() { raw.close(); }

    private static S3BlobStore store(String prefix) { return S3BlobStore.open(S3ProxySupport.settings(endpoint, prefix)); }

    /** Every object key under {@code prefix}, and every multipart upload still open there. */
    private static List<String> keys(String prefix) {
        List<String> out = new ArrayList<>();
        raw.listObjectsV2Paginator(b -> b.bucket(S3ProxySupport.BUCKET).prefix(prefix + "/")).contents()
                .forEach((S3Object o) -> out.add(o.key().substring(prefix.length() + 1)));
        raw.listMultipartUploads(b -> b.bucket(S3ProxySupport.BUCKET).prefix(prefix + "/")).uploads()
                .forEach(u -> out.add("multipart:" + u.key().substring(prefix.length() + 1)));
        return out;
    }

    private static byte[] read(BlobStore s, String partition, String blobId) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(s.writeTo(partition, blobId, out));
        return out.toByteArray();
    }

    @Test
    void putThenGetRoundTripsTheBytesAcrossPartBoundaries() throws Exception {
        String prefix = S3ProxySupport.prefix("roundtrip");
        S3BlobStore s = store(prefix);
        for (int size : new int[] {0, 1, S3BlobStore.PART_BYTES, S3BlobStore.PART_BYTES + 1,
                S3BlobStore.PART_BYTES * 2 + 7}) {
            byte[] bytes = new byte[size];
            new java.util.Random(size).nextBytes(bytes);
            String id = idOf(bytes);
            assertEquals(PutOutcome.STORED, s.put("p", id, new ByteArrayInputStream(bytes), 1 << 24, "image/png",
                    1_000));
            assertArrayEquals(bytes, read(s, "p", id), "size " + size);
            BlobStore.BlobInfo info = s.find("p", id).orElseThrow();
            assertEquals(size, info.byteLength());
            assertEquals("image/png", info.mediaType());
            assertEquals(1_000, info.uploadedAtMs());
        }
        assertTrue(keys(prefix).stream().noneMatch(k -> k.startsWith("uploads/") || k.startsWith("multipart:")),
                "no temporary key outlives its upload: " + keys(prefix));
    }

    @Test
    void theKeyLayoutIsPerPartitionContentAddressedAndEncoded() throws Exception {
        String prefix = S3ProxySupport.prefix("layout");
        S3BlobStore s = store("/" + prefix + "/");
        byte[] bytes = "laid out".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        for (String partition : new String[] {"tenant 1", "../a/b", ""}) {
            assertEquals(PutOutcome.STORED, s.put(partition, id, new ByteArrayInputStream(bytes), 100, null, 42));
            assertArrayEquals(bytes, read(s, partition, id));
        }
        assertEquals(Set.of("blobs/tenant+1/" + id, "blobs/%2E%2E%2Fa%2Fb/" + id, "blobs/%/" + id,
                "uploaded/0000000000000000042/tenant+1/" + id, "uploaded/0000000000000000042/%2E%2E%2Fa%2Fb/" + id,
                "uploaded/0000000000000000042/%/" + id), Set.copyOf(keys(prefix)));
        assertEquals(Set.of("../a/b", "", "tenant 1"), Set.copyOf(s.uploadedBefore(43, null, 10).stream()
                .map(BlobStore.BlobInfo::partition).toList()), "the listing decodes the partition back");
    }

    @Test
    void aReUploadIsIdempotentChecksTheBytesAndRenewsTheUploadTime() throws Exception {
        String prefix = S3ProxySupport.prefix("reupload");
        S3BlobStore s = store(prefix);
        byte[] bytes = "hello, attachment".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals(PutOutcome.STORED, s.put("p", id, new ByteArrayInputStream(bytes), 100, null, 1_000));
        assertEquals(PutOutcome.ALREADY_PRESENT, s.put("p", id, new ByteArrayInputStream(bytes), 100, "x/y", 5_000));
        assertEquals(List.of("blobs/p/" + id, "uploaded/0000000000000005000/p/" + id), keys(prefix),
                "nothing written twice; the sweep entry moved with the upload time");
        assertEquals(5_000, s.find("p", id).orElseThrow().uploadedAtMs(), "a re-upload renews the upload time");
        assertNull(s.find("p", id).orElseThrow().mediaType(), "the first upload's media type stays");
        assertArrayEquals(bytes, read(s, "p", id), "renewing the metadata kept the bytes");
        assertEquals(PutOutcome.HASH_MISMATCH, s.put("p", id, new ByteArrayInputStream("other".getBytes()), 100,
                null, 6_000), "a re-upload of other bytes under the id is still a mismatch");
        assertEquals(PutOutcome.TOO_LARGE, s.put("p", id, new ByteArrayInputStream(bytes), bytes.length - 1, null,
                6_000));
        assertEquals(5_000, s.find("p", id).orElseThrow().uploadedAtMs());
        assertEquals(PutOutcome.ALREADY_PRESENT, s.put("p", id, new ByteArrayInputStream(bytes), 100, null, 4_000));
        assertEquals(5_000, s.find("p", id).orElseThrow().uploadedAtMs(), "an older clock never moves it back");
    }

    @Test
    void aHashMismatchOrAnOversizedBodyLeavesNothingInTheBucket() throws Exception {
        String prefix = S3ProxySupport.prefix("refused");
        S3BlobStore s = store(prefix);
        byte[] bytes = new byte[S3BlobStore.PART_BYTES * 2 + 1000];   // multipart: parts were sent before the end
        new java.util.Random(7).nextBytes(bytes);
        String id = idOf(bytes);
        byte[] corrupted = bytes.clone();
        corrupted[corrupted.length - 1] ^= 1;
        assertEquals(PutOutcome.HASH_MISMATCH, s.put("p", id, new ByteArrayInputStream(corrupted), 1 << 24, null, 1));
        assertEquals(List.of(), keys(prefix), "the parts already sent were aborted with their upload");
        assertTrue(s.find("p", id).isEmpty());

        assertEquals(PutOutcome.TOO_LARGE, s.put("p", id, new ByteArrayInputStream(bytes), bytes.length - 1, null, 1));
        assertEquals(List.of(), keys(prefix));
        byte[] small = "small".getBytes();
        assertEquals(PutOutcome.HASH_MISMATCH, s.put("p", idOf(bytes), new ByteArrayInputStream(small), 100, null, 1));
        assertEquals(List.of(), keys(prefix), "a body within one part is checked before anything is sent");
        assertEquals(PutOutcome.STORED, s.put("p", id, new ByteArrayInputStream(bytes), bytes.length, null, 1),
                "exactly the cap is allowed");
    }

    @Test
    void aBrokenBodyLeavesNothingInTheBucket() throws Exception {
        String prefix = S3ProxySupport.prefix("broken");
        S3BlobStore s = store(prefix);
        InputStream broken = new InputStream() {
            int left = S3BlobStore.PART_BYTES * 2 + 10;

            @Override
            public int read() throws IOException {
                if (left == 0) throw new IOException("client went away");   // and stays broken
                left--;
                return 1;
            }
        };
        assertThrows(IOException.class, () -> s.put("p", "sha256:" + "0".repeat(64), broken, 1 << 24, null, 1));
        assertEquals(List.of(), keys(prefix));
    }

    @Test
    void blobsArePerPartitionAndPresenceIsChecked() throws Exception {
        S3BlobStore s = store(S3ProxySupport.prefix("partitions"));
        byte[] a = "a".getBytes();
        byte[] b = "b".getBytes();
        s.put("p", idOf(a), new ByteArrayInputStream(a), 10, null, 1);
        s.put("q", idOf(b), new ByteArrayInputStream(b), 10, null, 1);
        assertEquals(Set.of(idOf(a)), s.present("p", List.of(idOf(a), idOf(b), "sha256:" + "1".repeat(64))));
        assertTrue(s.find("q", idOf(a)).isEmpty(), "another partition's blob is not present here");
        assertFalse(s.writeTo("q", idOf(a), OutputStream.nullOutputStream()));
        assertEquals(Set.of(), s.present("p", List.of()));
    }

    @Test
    void theSweepListsOldBlobsInOrderAndDeletesOnlyThoseStillOld() throws Exception {
        String prefix = S3ProxySupport.prefix("sweep");
        S3BlobStore s = store(prefix);
        byte[][] blobs = {"one".getBytes(), "two".getBytes(), "three".getBytes()};
        for (int i = 0; i < blobs.length; i++) {
            s.put("p", idOf(blobs[i]), new ByteArrayInputStream(blobs[i]), 10, null, 100 + i);
        }
        List<BlobStore.BlobInfo> first = s.uploadedBefore(102, null, 1);
        assertEquals(List.of(idOf(blobs[0])), first.stream().map(BlobStore.BlobInfo::blobId).toList());
        assertEquals(List.of(idOf(blobs[1])), s.uploadedBefore(102, first.get(0), 10).stream()
                .map(BlobStore.BlobInfo::blobId).toList(), "keyset paging, the cutoff excluded");

        s.put("p", idOf(blobs[1]), new ByteArrayInputStream(blobs[1]), 10, null, 500);   // re-uploaded since
        assertFalse(s.delete("p", idOf(blobs[1]), 102), "a blob re-uploaded after the listing stays");
        assertTrue(s.delete("p", idOf(blobs[0]), 102));
        assertTrue(s.find("p", idOf(blobs[0])).isEmpty());
        assertEquals(Set.of("blobs/p/" + idOf(blobs[1]), "blobs/p/" + idOf(blobs[2]),
                "uploaded/0000000000000000500/p/" + idOf(blobs[1]), "uploaded/0000000000000000102/p/" + idOf(blobs[2])),
                Set.copyOf(keys(prefix)), "the deleted blob's sweep entry went with it");

        // a sweep entry whose blob is gone (a crash between entry and copy): the listing drops it
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(prefix + "/uploaded/0000000000000000090/p/"
                + "sha256:" + "2".repeat(64)), RequestBody.empty());
        assertEquals(List.of(), s.uploadedBefore(101, null, 10));
        assertFalse(keys(prefix).contains("uploaded/0000000000000000090/p/sha256:" + "2".repeat(64)));

        // uploads the process never completed: an object and an open multipart upload, both old; and a fresh one
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(prefix + "/uploads/0000000000000000050/u-dead"),
                RequestBody.fromBytes(new byte[] {0}));
        raw.createMultipartUpload(b -> b.bucket(S3ProxySupport.BUCKET)
                .key(prefix + "/uploads/0000000000000000060/u-dead-multipart"));
        raw.putObject(b -> b.bucket(S3ProxySupport.BUCKET).key(prefix + "/uploads/0000000000000000200/u-live"),
                RequestBody.fromBytes(new byte[] {0}));
        assertEquals(2, s.purgeIncompleteUploads(102), "only the old incomplete uploads; completed ones are blobs");
        assertEquals(Set.of("blobs/p/" + idOf(blobs[1]), "blobs/p/" + idOf(blobs[2]),
                "uploaded/0000000000000000500/p/" + idOf(blobs[1]), "uploaded/0000000000000000102/p/" + idOf(blobs[2]),
                "uploads/0000000000000000200/u-live"), Set.copyOf(keys(prefix)));
        assertArrayEquals(blobs[2], read(s, "p", idOf(blobs[2])));
    }

    // ------------------------------------------------------------------ streaming with bounded memory

    /** 200 MiB, as {@code PostgresBlobStoreTest}: never in memory at once on the client side. */
    static final long LARGE = 200L * 1024 * 1024;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aBlobFarLargerThanTheHeapStreamsThroughTheStoreInA64MiBJvm() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process child = new ProcessBuilder(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                LargeBlobRoundTrip.class.getName(), endpoint.toString(), S3ProxySupport.prefix("large"))
                .redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertTrue(output.contains("ROUND TRIP OK"), output);
        System.out.println("[S3BlobStoreTest] " + output.strip());
    }

    /** The child JVM: puts and reads back {@link #LARGE} bytes through the SDK, checking what came back. */
    static final class LargeBlobRoundTrip {
        public static void main(String[] args) throws Exception {
            S3BlobStore s = S3BlobStore.open(S3ProxySupport.settings(URI.create(args[0]), args[1]));
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            try (InputStream in = generated(LARGE)) {
                byte[] buf = new byte[1 << 16];
                for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
            }
            String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
            long heap = Runtime.getRuntime().maxMemory();
            BlobStreams.PeakHeap peak = BlobStreams.PeakHeap.begin();
            PutOutcome put = s.put("p", id, generated(LARGE), LARGE, "application/octet-stream", 1);
            if (put != PutOutcome.STORED) throw new AssertionError("put: " + put);
            MessageDigest back = MessageDigest.getInstance("SHA-256");
            long[] count = new long[1];
            s.writeTo("p", id, new OutputStream() {
                @Override
                public void write(int b) { back.update((byte) b); count[0]++; }

                @Override
                public void write(byte[] b, int off, int len) { back.update(b, off, len); count[0] += len; }
            });
            String got = "sha256:" + HexFormat.of().formatHex(back.digest());
            if (count[0] != LARGE || !got.equals(id)) throw new AssertionError("read back " + count[0] + " " + got);
            System.out.println("ROUND TRIP OK: " + LARGE + " bytes through a " + heap / (1024 * 1024)
                    + " MiB heap; peak heap used " + peak.end() / (1024 * 1024) + " MiB");
        }
    }
}

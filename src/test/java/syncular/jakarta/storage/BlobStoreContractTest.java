package syncular.jakarta.storage;

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
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.storage.BlobStore.PutOutcome;

/**
 * What every {@link BlobStore} does (SPEC §5.9.2, §5.9.3), run against each store by a subclass: content addressing,
 * idempotent re-upload, the size cap, nothing left behind by a failed upload, per-partition keys, the sweep's
 * primitives, and a blob far larger than a small heap streamed both ways in a JVM of its own with {@code -Xmx64m}.
 * Each test gets a store of its own, so "nothing left behind" and the sweep's listing see only what the test did.
 */
public abstract class BlobStoreContractTest {
    /** 200 MiB of a deterministic sequence: never in memory at once on the client side. */
    protected static final long LARGE = 200L * 1024 * 1024;

    /** The store under test, opened empty by {@link #emptyStore()} before each test. */
    protected BlobStore store;

    /** A store of its own holding nothing yet, for one test; the subclass closes it after the test. */
    protected abstract BlobStore emptyStore();

    /** Body lengths either side of the boundaries at which the store cuts a body into pieces. */
    protected abstract int[] sizesAroundPieceBoundaries();

    /** A body length of several pieces, so that some are sent before the end of the body is read. */
    protected abstract int severalPiecesBytes();

    /**
     * Fails unless {@link #store} holds exactly the blobs of {@code uploadedAtMsByBlobId}, all in {@code partition},
     * each under its upload time and with its bytes stored once, and nothing else: no temporary piece of an upload.
     */
    protected abstract void assertHoldsExactly(String partition, Map<String, Long> uploadedAtMsByBlobId,
                                               String message) throws Exception;

    /**
     * Leaves behind, behind the store's back, what a process that started uploading at {@code startedAtMs} and then
     * died leaves in this store; returns how many incomplete uploads that is.
     */
    protected abstract int abandonUploads(long startedAtMs) throws Exception;

    /**
     * The child JVM's main class and its arguments: it opens the store of this test from the arguments and prints
     * what {@link #roundTripLarge} returns.
     */
    protected abstract List<String> largeRoundTripMain();

    @BeforeEach
    void open() { store = emptyStore(); }

    protected static byte[] read(BlobStore s, String partition, String blobId) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(s.writeTo(partition, blobId, out));
        return out.toByteArray();
    }

    @Test
    void putThenGetRoundTripsTheBytesAcrossPieceBoundaries() throws Exception {
        Map<String, Long> stored = new LinkedHashMap<>();
        for (int size : sizesAroundPieceBoundaries()) {
            byte[] bytes = new byte[size];
            new java.util.Random(size).nextBytes(bytes);
            String id = idOf(bytes);
            assertEquals(PutOutcome.STORED, store.put("p", id, new ByteArrayInputStream(bytes), 1 << 24, "image/png",
                    1_000));
            assertArrayEquals(bytes, read(store, "p", id), "size " + size);
            BlobStore.BlobInfo info = store.find("p", id).orElseThrow();
            assertEquals(size, info.byteLength());
            assertEquals("image/png", info.mediaType());
            assertEquals(1_000, info.uploadedAtMs());
            stored.put(id, 1_000L);
        }
        assertHoldsExactly("p", stored, "no temporary piece outlives its upload");
    }

    @Test
    void aReUploadIsIdempotentChecksTheBytesAndRenewsTheUploadTime() throws Exception {
        byte[] bytes = "hello, attachment".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals(PutOutcome.STORED, store.put("p", id, new ByteArrayInputStream(bytes), 100, null, 1_000));
        assertEquals(PutOutcome.ALREADY_PRESENT, store.put("p", id, new ByteArrayInputStream(bytes), 100, "x/y",
                5_000));
        assertHoldsExactly("p", Map.of(id, 5_000L), "nothing written twice; the upload time moved");
        assertEquals(5_000, store.find("p", id).orElseThrow().uploadedAtMs(), "a re-upload renews the upload time");
        assertNull(store.find("p", id).orElseThrow().mediaType(), "the first upload's media type stays");
        assertArrayEquals(bytes, read(store, "p", id), "renewing the metadata kept the bytes");
        assertEquals(PutOutcome.HASH_MISMATCH, store.put("p", id, new ByteArrayInputStream("other".getBytes()), 100,
                null, 6_000), "a re-upload of other bytes under the id is still a mismatch");
        assertEquals(PutOutcome.TOO_LARGE, store.put("p", id, new ByteArrayInputStream(bytes), bytes.length - 1,
                null, 6_000));
        assertEquals(5_000, store.find("p", id).orElseThrow().uploadedAtMs());
        assertEquals(PutOutcome.ALREADY_PRESENT, store.put("p", id, new ByteArrayInputStream(bytes), 100, null,
                4_000));
        assertEquals(5_000, store.find("p", id).orElseThrow().uploadedAtMs(), "an older clock never moves it back");
    }

    @Test
    void aHashMismatchOrAnOversizedBodyStoresNothing() throws Exception {
        byte[] bytes = new byte[severalPiecesBytes()];
        new java.util.Random(7).nextBytes(bytes);
        String id = idOf(bytes);
        byte[] corrupted = bytes.clone();
        corrupted[corrupted.length - 1] ^= 1;
        assertEquals(PutOutcome.HASH_MISMATCH, store.put("p", id, new ByteArrayInputStream(corrupted), 1 << 24, null,
                1));
        assertHoldsExactly("p", Map.of(), "the pieces already sent went with their upload");
        assertTrue(store.find("p", id).isEmpty());

        assertEquals(PutOutcome.TOO_LARGE, store.put("p", id, new ByteArrayInputStream(bytes), bytes.length - 1, null,
                1));
        assertHoldsExactly("p", Map.of(), "an oversized body left nothing");
        byte[] small = "small".getBytes();
        assertEquals(PutOutcome.HASH_MISMATCH, store.put("p", id, new ByteArrayInputStream(small), 100, null, 1));
        assertHoldsExactly("p", Map.of(), "a body within one piece left nothing");
        assertEquals(PutOutcome.STORED, store.put("p", id, new ByteArrayInputStream(bytes), bytes.length, null, 1),
                "exactly the cap is allowed");
    }

    @Test
    void aBrokenBodyStoresNothing() throws Exception {
        InputStream broken = new InputStream() {
            int left = severalPiecesBytes();

            @Override
            public int read() throws IOException {
                if (left == 0) throw new IOException("client went away");   // and stays broken
                left--;
                return 1;
            }
        };
        assertThrows(IOException.class, () -> store.put("p", "sha256:" + "0".repeat(64), broken, 1 << 24, null, 1));
        assertHoldsExactly("p", Map.of(), "the pieces already sent went with their upload");
    }

    @Test
    void blobsArePerPartitionAndPresenceIsChecked() throws Exception {
        byte[] a = "a".getBytes();
        byte[] b = "b".getBytes();
        store.put("p", idOf(a), new ByteArrayInputStream(a), 10, null, 1);
        store.put("q", idOf(b), new ByteArrayInputStream(b), 10, null, 1);
        assertEquals(Set.of(idOf(a)), store.present("p", List.of(idOf(a), idOf(b), "sha256:" + "1".repeat(64))));
        assertTrue(store.find("q", idOf(a)).isEmpty(), "another partition's blob is not present here");
        assertFalse(store.writeTo("q", idOf(a), OutputStream.nullOutputStream()));
        assertEquals(Set.of(), store.present("p", List.of()));
    }

    @Test
    void theSweepListsOldBlobsInOrderAndDeletesOnlyThoseStillOld() throws Exception {
        byte[][] blobs = {"one".getBytes(), "two".getBytes(), "three".getBytes()};
        for (int i = 0; i < blobs.length; i++) {
            store.put("p", idOf(blobs[i]), new ByteArrayInputStream(blobs[i]), 10, null, 100 + i);
        }
        List<BlobStore.BlobInfo> first = store.uploadedBefore(102, null, 1);
        assertEquals(List.of(idOf(blobs[0])), first.stream().map(BlobStore.BlobInfo::blobId).toList());
        assertEquals(List.of(idOf(blobs[1])), store.uploadedBefore(102, first.get(0), 10).stream()
                .map(BlobStore.BlobInfo::blobId).toList(), "keyset paging, the cutoff excluded");

        store.put("p", idOf(blobs[1]), new ByteArrayInputStream(blobs[1]), 10, null, 500);   // re-uploaded since
        assertFalse(store.delete("p", idOf(blobs[1]), 102), "a blob re-uploaded after the listing stays");
        assertTrue(store.delete("p", idOf(blobs[0]), 102));
        assertTrue(store.find("p", idOf(blobs[0])).isEmpty());
        Map<String, Long> kept = Map.of(idOf(blobs[1]), 500L, idOf(blobs[2]), 102L);
        assertHoldsExactly("p", kept, "the deleted blob's bytes and sweep entry went with it");

        // uploads a process never completed: the old ones go, a fresh one stays until it is old too
        int old = abandonUploads(50);
        int fresh = abandonUploads(200);
        assertEquals(old, store.purgeIncompleteUploads(102), "only the old incomplete uploads; completed ones are blobs");
        assertEquals(fresh, store.purgeIncompleteUploads(201), "the fresh one outlived the first purge");
        assertHoldsExactly("p", kept, "purging touched no blob");
        assertArrayEquals(blobs[2], read(store, "p", idOf(blobs[2])));
    }

    // ------------------------------------------------------------------ streaming with bounded memory

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aBlobFarLargerThanTheHeapStreamsThroughTheStoreInA64MiBJvm() throws Exception {
        List<String> command = new ArrayList<>(List.of(System.getProperty("java.home") + File.separator + "bin"
                + File.separator + "java", "-Xmx64m", "-cp", System.getProperty("java.class.path")));
        command.addAll(largeRoundTripMain());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertTrue(output.contains("ROUND TRIP OK"), output);
        System.out.println("[" + getClass().getSimpleName() + "] " + output.strip());
    }

    /**
     * The child JVM's work, whatever the store: puts and reads back {@link #LARGE} bytes, checking the digest of what
     * came back, and returns the line the parent looks for, with the heap it had and the peak it used.
     */
    protected static String roundTripLarge(BlobStore s) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = generated(LARGE)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
        }
        String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
        String p = "large-" + System.nanoTime();
        long heap = Runtime.getRuntime().maxMemory();
        BlobStreams.PeakHeap peak = BlobStreams.PeakHeap.begin();
        PutOutcome put = s.put(p, id, generated(LARGE), LARGE, "application/octet-stream", 1);
        if (put != PutOutcome.STORED) throw new AssertionError("put: " + put);
        MessageDigest back = MessageDigest.getInstance("SHA-256");
        long[] count = new long[1];
        s.writeTo(p, id, new OutputStream() {
            @Override
            public void write(int b) { back.update((byte) b); count[0]++; }

            @Override
            public void write(byte[] b, int off, int len) { back.update(b, off, len); count[0] += len; }
        });
        String got = "sha256:" + HexFormat.of().formatHex(back.digest());
        if (count[0] != LARGE || !got.equals(id)) throw new AssertionError("read back " + count[0] + " " + got);
        return "ROUND TRIP OK: " + LARGE + " bytes through a " + heap / (1024 * 1024) + " MiB heap; peak heap used "
                + peak.end() / (1024 * 1024) + " MiB";
    }
}

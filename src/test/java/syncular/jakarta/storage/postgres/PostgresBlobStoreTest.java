package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.BlobStore.PutOutcome;
import syncular.jakarta.storage.BlobStreams.PeakHeap;

/**
 * The PostgreSQL blob store (SPEC §5.9.2, §5.9.3) on a real database: content addressing, idempotent re-upload,
 * the size cap, nothing stored by a failed upload, per-partition keys, the sweep's primitives, and a blob far larger
 * than a small heap streamed both ways in a JVM of its own with {@code -Xmx64m}.
 */
class PostgresBlobStoreTest {
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresBlobStore store;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        store = new PostgresBlobStore(db);
        store.install();
    }

    @AfterAll
    static void close() { db.close(); }

    private static byte[] read(String partition, String blobId) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(store.writeTo(partition, blobId, out));
        return out.toByteArray();
    }

    /** Rows of every blob table: what a failed upload must leave unchanged. */
    private static long storedRows() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM sync_blobs) + (SELECT count(*) FROM"
                     + " sync_blob_chunks) + (SELECT count(*) FROM sync_blob_uploads)")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void putThenGetRoundTripsTheBytesAcrossChunkBoundaries() throws Exception {
        String p = EmbeddedPostgresSupport.partition("blob");
        for (int size : new int[] {0, 1, PostgresBlobStore.CHUNK_BYTES, PostgresBlobStore.CHUNK_BYTES + 1,
                PostgresBlobStore.CHUNK_BYTES * PostgresBlobStore.BATCH * 2 + 7}) {
            byte[] bytes = new byte[size];
            new java.util.Random(size).nextBytes(bytes);
            String id = idOf(bytes);
            assertEquals(PutOutcome.STORED, store.put(p, id, new ByteArrayInputStream(bytes), 1 << 24, "image/png",
                    1_000));
            assertArrayEquals(bytes, read(p, id), "size " + size);
            BlobStore.BlobInfo info = store.find(p, id).orElseThrow();
            assertEquals(size, info.byteLength());
            assertEquals("image/png", info.mediaType());
            assertEquals(1_000, info.uploadedAtMs());
        }
    }

    @Test
    void aReUploadIsIdempotentChecksTheBytesAndRenewsTheUploadTime() throws Exception {
        String p = EmbeddedPostgresSupport.partition("blob");
        byte[] bytes = "hello, attachment".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals(PutOutcome.STORED, store.put(p, id, new ByteArrayInputStream(bytes), 100, null, 1_000));
        long before = storedRows();
        assertEquals(PutOutcome.ALREADY_PRESENT, store.put(p, id, new ByteArrayInputStream(bytes), 100, "x/y", 5_000));
        assertEquals(before, storedRows(), "nothing written twice");
        assertEquals(5_000, store.find(p, id).orElseThrow().uploadedAtMs(), "a re-upload renews the upload time");
        assertEquals(null, store.find(p, id).orElseThrow().mediaType(), "the first upload's media type stays");
        assertEquals(PutOutcome.HASH_MISMATCH, store.put(p, id, new ByteArrayInputStream("other".getBytes()), 100,
                null, 6_000), "a re-upload of other bytes under the id is still a mismatch");
        assertEquals(5_000, store.find(p, id).orElseThrow().uploadedAtMs());
    }

    @Test
    void aHashMismatchOrAnOversizedBodyStoresNothing() throws Exception {
        String p = EmbeddedPostgresSupport.partition("blob");
        byte[] bytes = new byte[PostgresBlobStore.CHUNK_BYTES * PostgresBlobStore.BATCH * 3];
        new java.util.Random(7).nextBytes(bytes);
        String id = idOf(bytes);
        long before = storedRows();
        byte[] corrupted = bytes.clone();
        corrupted[corrupted.length - 1] ^= 1;
        assertEquals(PutOutcome.HASH_MISMATCH, store.put(p, id, new ByteArrayInputStream(corrupted), 1 << 24, null, 1));
        assertEquals(before, storedRows(), "the chunks already sent were deleted with their upload");
        assertTrue(store.find(p, id).isEmpty());

        assertEquals(PutOutcome.TOO_LARGE, store.put(p, id, new ByteArrayInputStream(bytes), bytes.length - 1, null, 1));
        assertEquals(before, storedRows());
        assertEquals(PutOutcome.STORED, store.put(p, id, new ByteArrayInputStream(bytes), bytes.length, null, 1),
                "exactly the cap is allowed");
    }

    @Test
    void aBrokenBodyStoresNothing() throws Exception {
        String p = EmbeddedPostgresSupport.partition("blob");
        long before = storedRows();
        InputStream broken = new InputStream() {
            int left = PostgresBlobStore.CHUNK_BYTES * PostgresBlobStore.BATCH * 2;

            @Override
            public int read() throws IOException {
                if (left-- == 0) throw new IOException("client went away");
                return 1;
            }
        };
        assertThrows(IOException.class, () -> store.put(p, "sha256:" + "0".repeat(64), broken, 1 << 24, null, 1));
        assertEquals(before, storedRows());
    }

    @Test
    void blobsArePerPartitionAndPresenceIsOneLookUp() throws Exception {
        String p = EmbeddedPostgresSupport.partition("blob");
        String q = EmbeddedPostgresSupport.partition("blob");
        byte[] a = "a".getBytes();
        byte[] b = "b".getBytes();
        store.put(p, idOf(a), new ByteArrayInputStream(a), 10, null, 1);
        store.put(q, idOf(b), new ByteArrayInputStream(b), 10, null, 1);
        assertEquals(Set.of(idOf(a)), store.present(p, List.of(idOf(a), idOf(b), "sha256:" + "1".repeat(64))));
        assertTrue(store.find(q, idOf(a)).isEmpty(), "another partition's blob is not present here");
        assertFalse(store.writeTo(q, idOf(a), OutputStream.nullOutputStream()));
        assertEquals(Set.of(), store.present(p, List.of()));
    }

    @Test
    void theSweepListsOldBlobsInOrderAndDeletesOnlyThoseStillOld() throws Exception {
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try {
            PostgresBlobStore s = new PostgresBlobStore(own);
            String p = EmbeddedPostgresSupport.partition("sweep");
            byte[][] blobs = {"one".getBytes(), "two".getBytes(), "three".getBytes()};
            for (int i = 0; i < blobs.length; i++) {
                s.put(p, idOf(blobs[i]), new ByteArrayInputStream(blobs[i]), 10, null, 100 + i);
            }
            List<BlobStore.BlobInfo> first = s.uploadedBefore(102, null, 1);
            assertEquals(List.of(idOf(blobs[0])), first.stream().map(BlobStore.BlobInfo::blobId).toList());
            assertEquals(List.of(idOf(blobs[1])), s.uploadedBefore(102, first.get(0), 10).stream()
                    .map(BlobStore.BlobInfo::blobId).toList(), "keyset paging, the cutoff excluded");

            s.put(p, idOf(blobs[1]), new ByteArrayInputStream(blobs[1]), 10, null, 500);   // re-uploaded since
            assertFalse(s.delete(p, idOf(blobs[1]), 102), "a blob re-uploaded after the listing stays");
            assertTrue(s.delete(p, idOf(blobs[0]), 102));
            assertTrue(s.find(p, idOf(blobs[0])).isEmpty());
            try (Connection c = own.getConnection(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM sync_blob_chunks")) {
                rs.next();
                assertEquals(2, rs.getLong(1), "the deleted blob's chunks went with it");
            }

            // an upload the process never completed: its chunks stay until the purge
            try (Connection c = own.getConnection(); Statement st = c.createStatement()) {
                st.execute("INSERT INTO sync_blob_uploads VALUES ('u-dead', 'p', 50)");
                st.execute("INSERT INTO sync_blob_chunks VALUES ('u-dead', 0, '\\x00')");
            }
            assertEquals(1, s.purgeIncompleteUploads(102), "only the incomplete upload; completed ones are blobs");
            assertArrayEquals(blobs[2], readFrom(s, p, idOf(blobs[2])));
        } finally {
            own.close();
        }
    }

    private static byte[] readFrom(PostgresBlobStore s, String p, String id) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(s.writeTo(p, id, out));
        return out.toByteArray();
    }

    // ------------------------------------------------------------------ streaming with bounded memory

    /** 200 MiB of a deterministic sequence: never in memory at once. */
    static final long LARGE = 200L * 1024 * 1024;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aBlobFarLargerThanTheHeapStreamsThroughAStoreInA64MiBJvm() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process child = new ProcessBuilder(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                LargeBlobRoundTrip.class.getName(), db.url())
                .redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertTrue(output.contains("ROUND TRIP OK"), output);
        System.out.println("[PostgresBlobStoreTest] " + output.strip());
    }

    /** The child JVM: puts and reads back {@link #LARGE} bytes, checking the digest of what came back. */
    static final class LargeBlobRoundTrip {
        public static void main(String[] args) throws Exception {
            EmbeddedPostgresSupport.Pool pool = new EmbeddedPostgresSupport.Pool(args[0]);
            PostgresBlobStore s = new PostgresBlobStore(pool);
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            try (InputStream in = generated(LARGE)) {
                byte[] buf = new byte[1 << 16];
                for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
            }
            String id = "sha256:" + HexFormat.of().formatHex(sha.digest());
            String p = "large-" + System.nanoTime();
            long heap = Runtime.getRuntime().maxMemory();
            PeakHeap peak = PeakHeap.begin();
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
            System.out.println("ROUND TRIP OK: " + LARGE + " bytes through a " + heap / (1024 * 1024)
                    + " MiB heap; peak heap used " + peak.end() / (1024 * 1024) + " MiB");
            pool.close();
        }
    }
}

package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.BlobStoreContractTest;

/**
 * The PostgreSQL blob store on a real database (embedded PostgreSQL), a database of its own per test: the blob store
 * contract, with "holds exactly" read off the blob, chunk and upload tables, so a blob's bytes are its
 * {@value PostgresBlobStore#CHUNK_BYTES}-byte chunks, once, and no upload outlives its blob.
 */
class PostgresBlobStoreTest extends BlobStoreContractTest {
    private EmbeddedPostgresSupport.Pool db;

    @Override
    protected BlobStore emptyStore() {
        db = EmbeddedPostgresSupport.newDatabase();
        PostgresBlobStore s = new PostgresBlobStore(db);
        s.install();
        return s;
    }

    @AfterEach
    void close() { db.close(); }

    @Override
    protected int[] sizesAroundPieceBoundaries() {
        return new int[] {0, 1, PostgresBlobStore.CHUNK_BYTES, PostgresBlobStore.CHUNK_BYTES + 1,
                PostgresBlobStore.CHUNK_BYTES * PostgresBlobStore.BATCH * 2 + 7};
    }

    /** Three batches of chunks: two were written before the end of the body is read. */
    @Override
    protected int severalPiecesBytes() { return PostgresBlobStore.CHUNK_BYTES * PostgresBlobStore.BATCH * 3; }

    @Override
    protected void assertHoldsExactly(String partition, Map<String, Long> uploadedAtMsByBlobId, String message)
            throws Exception {
        Map<String, Long> blobs = new HashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT partition, blob_id, uploaded_at_ms FROM sync_blobs")) {
                while (rs.next()) {
                    assertEquals(partition, rs.getString(1), message);
                    blobs.put(rs.getString(2), rs.getLong(3));
                }
            }
            assertEquals(uploadedAtMsByBlobId, blobs, message);
            try (ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM sync_blob_uploads)"
                    + " - (SELECT count(*) FROM sync_blobs), (SELECT count(*) FROM sync_blob_chunks)"
                    + " - (SELECT coalesce(sum((byte_length + " + PostgresBlobStore.CHUNK_BYTES + " - 1) / "
                    + PostgresBlobStore.CHUNK_BYTES + "), 0) FROM sync_blobs)")) {
                rs.next();
                assertEquals(0, rs.getLong(1), message + ": an upload without its blob");
                assertEquals(0, rs.getLong(2), message + ": chunks beyond the blobs' bytes");
            }
        }
    }

    /** An upload row and its first chunk, never completed into a blob. */
    @Override
    protected int abandonUploads(long startedAtMs) throws Exception {
        String upload = "u-dead-" + UUID.randomUUID();
        try (Connection c = db.getConnection();
             PreparedStatement begin = c.prepareStatement("INSERT INTO sync_blob_uploads VALUES (?, 'p', ?)");
             PreparedStatement chunk = c.prepareStatement("INSERT INTO sync_blob_chunks VALUES (?, 0, '\\x00')")) {
            begin.setString(1, upload);
            begin.setLong(2, startedAtMs);
            begin.executeUpdate();
            chunk.setString(1, upload);
            chunk.executeUpdate();
        }
        return 1;
    }

    @Override
    protected List<String> largeRoundTripMain() { return List.of(LargeBlobRoundTrip.class.getName(), db.url()); }

    /** The child JVM: opens the store on the test's database and round-trips {@link #LARGE} bytes through it. */
    static final class LargeBlobRoundTrip {
        public static void main(String[] args) throws Exception {
            EmbeddedPostgresSupport.Pool pool = new EmbeddedPostgresSupport.Pool(args[0]);
            System.out.println(roundTripLarge(new PostgresBlobStore(pool)));
            pool.close();
        }
    }
}

package syncular.jakarta.storage.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import syncular.jakarta.storage.BlobStore;

/**
 * {@link BlobStore} in PostgreSQL, as fixed-size chunks (SPEC §5.9.2). An upload streams into
 * {@code sync_blob_chunks} under an upload id of its own ({@code sync_blob_uploads}), {@value #BATCH} chunks of
 * {@value #CHUNK_BYTES} bytes per round trip, each an autocommit statement on a pooled connection taken for it; only
 * once every byte has arrived and hashes to the blobId does {@code sync_blobs} name the upload, in one statement.
 * Until then the blob is not present, and a failed upload (hash mismatch, too large, a broken body) deletes its
 * chunks; one the process never finished is removed by {@link #purgeIncompleteUploads}. Two uploads of the same
 * blob race harmlessly: the first to complete is named, the other deletes its own chunks.
 *
 * <p>Why chunks, not large objects or one {@code bytea}: a {@code bytea} is read and written whole, so a 200 MB blob
 * would be 200 MB of heap (twice, for the driver's copy). Large objects stream, but only inside a transaction, need
 * pgjdbc's own API on an unwrapped connection (container pools wrap it), and leak unless every delete also unlinks
 * them. Chunks are plain rows: any DataSource, one cascade deletes a blob, dumps and replication carry them, and
 * neither an upload nor a download holds a connection or a transaction while it waits for a slow client. The chunk
 * column is {@code STORAGE EXTERNAL}: blobs are mostly compressed media, and TOAST compression would only cost CPU
 * (the stored bytes stay exactly the uploaded bytes either way, §5.9.5). A chunk, even as the driver's hex text,
 * stays below half a G1 region of a small heap, so chunks are ordinary young-generation garbage, never humongous
 * allocations.
 */
public final class PostgresBlobStore implements BlobStore {
    static final int CHUNK_BYTES = 128 * 1024;
    /** Chunks sent per round trip, and read per round trip: 1 MiB of blob in flight at most. */
    static final int BATCH = 8;

    static final List<String> DDL = List.of("""
            CREATE TABLE IF NOT EXISTS sync_blob_uploads(
              upload_id TEXT PRIMARY KEY,
              partition TEXT NOT NULL,
              started_at_ms BIGINT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS sync_blob_uploads_by_age ON sync_blob_uploads(started_at_ms)", """
            CREATE TABLE IF NOT EXISTS sync_blob_chunks(
              upload_id TEXT NOT NULL REFERENCES sync_blob_uploads(upload_id) ON DELETE CASCADE,
              seq INTEGER NOT NULL,
              data BYTEA NOT NULL,
              PRIMARY KEY(upload_id, seq)
            )""",
            "ALTER TABLE sync_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL", """
            CREATE TABLE IF NOT EXISTS sync_blobs(
              partition TEXT NOT NULL,
              blob_id TEXT NOT NULL,
              upload_id TEXT NOT NULL UNIQUE REFERENCES sync_blob_uploads(upload_id) ON DELETE CASCADE,
              byte_length BIGINT NOT NULL,
              media_type TEXT,
              uploaded_at_ms BIGINT NOT NULL,
              PRIMARY KEY(partition, blob_id)
            )""",
            "CREATE INDEX IF NOT EXISTS sync_blobs_by_age ON sync_blobs(uploaded_at_ms, partition, blob_id)");

    private static final String FIND = "SELECT byte_length, media_type, uploaded_at_ms FROM sync_blobs"
            + " WHERE partition = ? AND blob_id = ?";
    private static final String TOUCH = "UPDATE sync_blobs SET uploaded_at_ms = GREATEST(uploaded_at_ms, ?)"
            + " WHERE partition = ? AND blob_id = ?";
    private static final String BEGIN_UPLOAD =
            "INSERT INTO sync_blob_uploads(upload_id, partition, started_at_ms) VALUES (?, ?, ?)";
    private static final String INSERT_CHUNK = "INSERT INTO sync_blob_chunks(upload_id, seq, data) VALUES (?, ?, ?)";
    /** Names the upload as the blob, unless another upload completed first; answers the upload the blob names. */
    private static final String COMPLETE = """
            INSERT INTO sync_blobs(partition, blob_id, upload_id, byte_length, media_type, uploaded_at_ms)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (partition, blob_id) DO UPDATE
              SET uploaded_at_ms = GREATEST(sync_blobs.uploaded_at_ms, EXCLUDED.uploaded_at_ms)
            RETURNING upload_id""";
    private static final String DROP_UPLOAD = "DELETE FROM sync_blob_uploads WHERE upload_id = ?";
    private static final String CHUNKS = """
            SELECT c.seq, c.data FROM sync_blobs b JOIN sync_blob_chunks c ON c.upload_id = b.upload_id
             WHERE b.partition = ? AND b.blob_id = ? AND c.seq >= ?
             ORDER BY c.seq LIMIT ?""";
    private static final String PRESENT = "SELECT blob_id FROM sync_blobs WHERE partition = ? AND blob_id = ANY(?::text[])";
    private static final String COLUMNS = "partition, blob_id, byte_length, media_type, uploaded_at_ms";
    private static final String OLDEST = "SELECT " + COLUMNS + " FROM sync_blobs WHERE uploaded_at_ms < ?"
            + " ORDER BY uploaded_at_ms, partition, blob_id LIMIT ?";
    private static final String OLDEST_AFTER = "SELECT " + COLUMNS + " FROM sync_blobs WHERE uploaded_at_ms < ?"
            + " AND (uploaded_at_ms, partition, blob_id) > (?, ?, ?) ORDER BY uploaded_at_ms, partition, blob_id LIMIT ?";
    /** The blob row and its chunks go with the upload row they hang off. */
    private static final String DELETE = """
            DELETE FROM sync_blob_uploads u USING sync_blobs b
             WHERE b.partition = ? AND b.blob_id = ? AND b.uploaded_at_ms < ? AND u.upload_id = b.upload_id""";
    private static final String PURGE = """
            DELETE FROM sync_blob_uploads u
             WHERE u.started_at_ms < ? AND NOT EXISTS (SELECT 1 FROM sync_blobs b WHERE b.upload_id = u.upload_id)""";

    private final OwnTables tables;

    public PostgresBlobStore(DataSource dataSource) { this.tables = new OwnTables(dataSource, DDL); }

    /** Creates the blob tables if absent; called once at start so concurrent first requests never race on DDL. */
    public void install() { tables.install(); }

    @Override
    public PutOutcome put(String partition, String blobId, InputStream body, long maxBytes, String mediaType,
                          long nowMs) throws IOException {
        if (!BlobStore.isBlobId(blobId)) throw new IllegalArgumentException("not a blobId (SPEC §5.9.1)");
        if (find(partition, blobId).isPresent()) {
            PutOutcome checked = drain(blobId, body, maxBytes);
            if (checked == PutOutcome.STORED) {
                tables.run(c -> {
                    try (PreparedStatement ps = c.prepareStatement(TOUCH)) {
                        ps.setLong(1, nowMs);
                        ps.setString(2, partition);
                        ps.setString(3, blobId);
                        return ps.executeUpdate();
                    }
                });
                return PutOutcome.ALREADY_PRESENT;
            }
            return checked;
        }
        String upload = UUID.randomUUID().toString();
        tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(BEGIN_UPLOAD)) {
                ps.setString(1, upload);
                ps.setString(2, partition);
                ps.setLong(3, nowMs);
                return ps.executeUpdate();
            }
        });
        boolean named = false;
        try {
            MessageDigest sha = sha256();
            long total = 0;
            int seq = 0;
            List<byte[]> pending = new ArrayList<>(BATCH);
            while (true) {
                byte[] chunk = new byte[CHUNK_BYTES];
                int n = body.readNBytes(chunk, 0, CHUNK_BYTES);
                if (n == 0) break;
                total += n;
                if (total > maxBytes) return PutOutcome.TOO_LARGE;
                sha.update(chunk, 0, n);
                pending.add(n == CHUNK_BYTES ? chunk : java.util.Arrays.copyOf(chunk, n));
                if (pending.size() == BATCH) seq = sendChunks(upload, seq, pending);
                if (n < CHUNK_BYTES) break;
            }
            if (!blobId.equals(idOf(sha))) return PutOutcome.HASH_MISMATCH;
            sendChunks(upload, seq, pending);
            long length = total;
            String winner = tables.run(c -> {
                try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
                    ps.setString(1, partition);
                    ps.setString(2, blobId);
                    ps.setString(3, upload);
                    ps.setLong(4, length);
                    ps.setString(5, mediaType);
                    ps.setLong(6, nowMs);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getString(1);
                    }
                }
            });
            named = winner.equals(upload);
            return named ? PutOutcome.STORED : PutOutcome.ALREADY_PRESENT;
        } finally {
            if (!named) dropUpload(upload);
        }
    }

    /** Sends {@code pending} as one batch (one round trip) from chunk number {@code seq}; returns the next number. */
    private int sendChunks(String upload, int seq, List<byte[]> pending) {
        if (pending.isEmpty()) return seq;
        int next = tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(INSERT_CHUNK)) {
                int s = seq;
                for (byte[] chunk : pending) {
                    ps.setString(1, upload);
                    ps.setInt(2, s++);
                    ps.setBytes(3, chunk);
                    ps.addBatch();
                }
                ps.executeBatch();
                return s;
            }
        });
        pending.clear();
        return next;
    }

    private void dropUpload(String upload) {
        tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(DROP_UPLOAD)) {
                ps.setString(1, upload);
                return ps.executeUpdate();
            }
        });
    }

    /** Reads an upload of a present blob to its end, only to check it; STORED means "the bytes are the blob's". */
    private static PutOutcome drain(String blobId, InputStream body, long maxBytes) throws IOException {
        MessageDigest sha = sha256();
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        for (int n; (n = body.read(buf)) >= 0; ) {
            total += n;
            if (total > maxBytes) return PutOutcome.TOO_LARGE;
            sha.update(buf, 0, n);
        }
        return blobId.equals(idOf(sha)) ? PutOutcome.STORED : PutOutcome.HASH_MISMATCH;
    }

    @Override
    public Optional<BlobInfo> find(String partition, String blobId) {
        return tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(FIND)) {
                ps.setString(1, partition);
                ps.setString(2, blobId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(new BlobInfo(partition, blobId, rs.getLong(1), rs.getString(2),
                            rs.getLong(3))) : Optional.empty();
                }
            }
        });
    }

    @Override
    public boolean writeTo(String partition, String blobId, OutputStream out) throws IOException {
        Optional<BlobInfo> info = find(partition, blobId);
        if (info.isEmpty()) return false;
        long expected = info.get().byteLength();
        long written = 0;
        int seq = 0;
        while (true) {
            int from = seq;
            List<byte[]> page = tables.run(c -> {
                try (PreparedStatement ps = c.prepareStatement(CHUNKS)) {
                    ps.setString(1, partition);
                    ps.setString(2, blobId);
                    ps.setInt(3, from);
                    ps.setInt(4, BATCH);
                    List<byte[]> chunks = new ArrayList<>(BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        for (int s = from; rs.next(); s++) {
                            if (rs.getInt(1) != s) return null;   // a gap: not the blob that was found
                            chunks.add(rs.getBytes(2));
                        }
                    }
                    return chunks;
                }
            });
            if (page == null) break;
            for (byte[] chunk : page) {
                out.write(chunk);
                written += chunk.length;
            }
            seq += page.size();
            if (page.size() < BATCH) break;
        }
        if (written != expected) {
            throw new IOException("the blob was removed while it was being sent");
        }
        return true;
    }

    @Override
    public Set<String> present(String partition, Collection<String> blobIds) {
        Set<String> out = new HashSet<>();
        if (blobIds.isEmpty()) return out;
        return tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(PRESENT)) {
                ps.setString(1, partition);
                ps.setArray(2, c.createArrayOf("text", blobIds.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(rs.getString(1));
                }
            }
            return out;
        });
    }

    @Override
    public List<BlobInfo> uploadedBefore(long cutoffMs, BlobInfo after, int limit) {
        return tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(after == null ? OLDEST : OLDEST_AFTER)) {
                int i = 1;
                ps.setLong(i++, cutoffMs);
                if (after != null) {
                    ps.setLong(i++, after.uploadedAtMs());
                    ps.setString(i++, after.partition());
                    ps.setString(i++, after.blobId());
                }
                ps.setInt(i, limit);
                List<BlobInfo> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new BlobInfo(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4),
                                rs.getLong(5)));
                    }
                }
                return out;
            }
        });
    }

    @Override
    public boolean delete(String partition, String blobId, long cutoffMs) {
        return tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(DELETE)) {
                ps.setString(1, partition);
                ps.setString(2, blobId);
                ps.setLong(3, cutoffMs);
                return ps.executeUpdate() > 0;
            }
        });
    }

    @Override
    public int purgeIncompleteUploads(long startedBeforeMs) {
        return tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(PURGE)) {
                ps.setLong(1, startedBeforeMs);
                return ps.executeUpdate();
            }
        });
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static String idOf(MessageDigest sha) { return "sha256:" + HexFormat.of().formatHex(sha.digest()); }
}

package syncular.jakarta.storage.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import syncular.jakarta.storage.SegmentBytesCache;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;

/**
 * {@link SegmentStore} in PostgreSQL: {@code sync_segments} holds each content address's bytes once,
 * {@code sync_segment_publications} one row per context with its own expiry. Writes are single statements in
 * autocommit (or the caller's JTA transaction): publishing is idempotent, so a lost race only repeats a row that
 * readers select the newest of.
 */
public final class PostgresSegmentStore implements SegmentStore {
    static final List<String> DDL = List.of("""
            CREATE TABLE IF NOT EXISTS sync_segments(
              segment_id TEXT PRIMARY KEY,
              bytes BYTEA NOT NULL,
              created_at_ms BIGINT NOT NULL
            )""", """
            CREATE TABLE IF NOT EXISTS sync_segment_publications(
              segment_id TEXT NOT NULL REFERENCES sync_segments(segment_id) ON DELETE CASCADE,
              partition TEXT NOT NULL,
              log_epoch TEXT NOT NULL,
              tbl TEXT NOT NULL,
              schema_version INTEGER NOT NULL,
              media_type SMALLINT NOT NULL,
              scope_digest TEXT NOT NULL,
              as_of_commit_seq BIGINT NOT NULL,
              row_cursor TEXT COLLATE "C",
              next_row_cursor TEXT COLLATE "C",
              byte_length BIGINT NOT NULL,
              row_count BIGINT NOT NULL,
              created_at_ms BIGINT NOT NULL,
              expires_at_ms BIGINT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS sync_segment_publications_by_segment"
                    + " ON sync_segment_publications(segment_id, partition, log_epoch)",
            "CREATE INDEX IF NOT EXISTS sync_segment_publications_by_context"
                    + " ON sync_segment_publications(partition, log_epoch, tbl, scope_digest, as_of_commit_seq)",
            "CREATE INDEX IF NOT EXISTS sync_segment_publications_by_expiry ON sync_segment_publications(expires_at_ms)");

    private static final String INSERT_SEGMENT =
            "INSERT INTO sync_segments(segment_id, bytes, created_at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING";
    private static final String SAME_BYTES = "SELECT bytes = ? FROM sync_segments WHERE segment_id = ?";
    /** A context up to where its page starts: what {@link #find} matches. */
    private static final String CONTEXT_START = "partition = ? AND log_epoch = ? AND tbl = ? AND schema_version = ?"
            + " AND media_type = ? AND scope_digest = ? AND as_of_commit_seq = ? AND row_cursor IS NOT DISTINCT FROM ?";
    private static final String CONTEXT = CONTEXT_START + " AND next_row_cursor IS NOT DISTINCT FROM ?";
    private static final String EXTEND = "UPDATE sync_segment_publications SET expires_at_ms = GREATEST(expires_at_ms, ?)"
            + " WHERE segment_id = ? AND " + CONTEXT;
    private static final String INSERT_PUBLICATION = "INSERT INTO sync_segment_publications(segment_id, partition,"
            + " log_epoch, tbl, schema_version, media_type, scope_digest, as_of_commit_seq, row_cursor, next_row_cursor,"
            + " byte_length, row_count, created_at_ms, expires_at_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    private static final String COLUMNS = "segment_id, partition, log_epoch, tbl, schema_version, media_type,"
            + " scope_digest, as_of_commit_seq, row_cursor, next_row_cursor, byte_length, row_count, created_at_ms,"
            + " expires_at_ms";
    private static final String FIND = "SELECT " + COLUMNS + " FROM sync_segment_publications WHERE " + CONTEXT_START
            + " AND expires_at_ms > ? ORDER BY created_at_ms DESC LIMIT 1";
    private static final String BY_SEGMENT = "SELECT " + COLUMNS + " FROM sync_segment_publications"
            + " WHERE segment_id = ? AND partition = ? AND log_epoch = ? ORDER BY created_at_ms DESC";
    private static final String BY_SEGMENT_ANY_PARTITION = "SELECT " + COLUMNS + " FROM sync_segment_publications"
            + " WHERE segment_id = ? ORDER BY created_at_ms DESC";
    private static final String BYTES = "SELECT bytes FROM sync_segments WHERE segment_id = ?";
    private static final String SWEEP_PUBLICATIONS = "DELETE FROM sync_segment_publications WHERE expires_at_ms <= ?";
    private static final String SWEEP_SEGMENTS = "DELETE FROM sync_segments s WHERE NOT EXISTS"
            + " (SELECT 1 FROM sync_segment_publications p WHERE p.segment_id = s.segment_id)";

    private final OwnTables tables;
    private final SegmentBytesCache<String, byte[]> recent;

    /**
     * {@code cacheBytes}: how many bytes of recently stored or read segments this node keeps in memory for
     * {@link #bytes} (0: none). A segment larger than a quarter of it is never kept.
     */
    public PostgresSegmentStore(DataSource dataSource, long cacheBytes) {
        this.tables = new OwnTables(dataSource, DDL);
        this.recent = SegmentBytesCache.byContentAddress(cacheBytes);
    }

    @Override
    public Publication publish(Publication p, byte[] bytes) {
        if (!p.segmentId().equals(SegmentStore.segmentId(bytes))) {
            throw new IllegalArgumentException("a segment id must be the SHA-256 of its bytes");
        }
        Publication published = run(c -> {
            try (PreparedStatement ps = c.prepareStatement(INSERT_SEGMENT)) {
                ps.setString(1, p.segmentId());
                ps.setBytes(2, bytes);
                ps.setLong(3, p.createdAtMs());
                if (ps.executeUpdate() == 0) {
                    try (PreparedStatement same = c.prepareStatement(SAME_BYTES)) {
                        same.setBytes(1, bytes);
                        same.setString(2, p.segmentId());
                        try (ResultSet rs = same.executeQuery()) {
                            if (rs.next() && !rs.getBoolean(1)) {
                                // Different bytes under one SHA-256: refuse rather than serve the wrong content.
                                throw new StorageException(StorageErrorCode.UNCLASSIFIED,
                                        java.util.Map.of("reason", "segment content collision"));
                            }
                        }
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(EXTEND)) {
                ps.setLong(1, p.expiresAtMs());
                ps.setString(2, p.segmentId());
                bindContext(ps, 3, p.key());
                if (ps.executeUpdate() > 0) return p;
            }
            try (PreparedStatement ps = c.prepareStatement(INSERT_PUBLICATION)) {
                ps.setString(1, p.segmentId());
                bindContext(ps, 2, p.key());
                ps.setLong(11, p.byteLength());
                ps.setLong(12, p.rowCount());
                ps.setLong(13, p.createdAtMs());
                ps.setLong(14, p.expiresAtMs());
                ps.executeUpdate();
            }
            return p;
        });
        recent.remember(p.segmentId(), bytes);
        return published;
    }

    @Override
    public Optional<Publication> find(Key key, long nowMs) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(FIND)) {
                bindStart(ps, 1, key);
                ps.setLong(9, nowMs);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(read(rs)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public List<Publication> publications(String segmentId, String partition, String logEpoch) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(BY_SEGMENT)) {
                ps.setString(1, segmentId);
                ps.setString(2, partition);
                ps.setString(3, logEpoch);
                List<Publication> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(read(rs));
                }
                return out;
            }
        });
    }

    @Override
    public List<Publication> publications(String segmentId) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(BY_SEGMENT_ANY_PARTITION)) {
                ps.setString(1, segmentId);
                List<Publication> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(read(rs));
                }
                return out;
            }
        });
    }

    /** The stored bytes; the array may be shared with other callers and must not be modified. */
    @Override
    public Optional<byte[]> bytes(String segmentId) {
        Optional<byte[]> hit = recent.get(segmentId);
        if (hit.isPresent()) return hit;
        Optional<byte[]> read = run(c -> {
            try (PreparedStatement ps = c.prepareStatement(BYTES)) {
                ps.setString(1, segmentId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rs.getBytes(1)) : Optional.empty();
                }
            }
        });
        read.ifPresent(b -> recent.remember(segmentId, b));
        return read;
    }

    @Override
    public int sweepExpired(long nowMs) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(SWEEP_PUBLICATIONS)) {
                ps.setLong(1, nowMs);
                ps.executeUpdate();
            }
            try (Statement s = c.createStatement()) {
                int swept = s.executeUpdate(SWEEP_SEGMENTS);
                if (swept > 0) recent.forgetAll();   // no memory for bytes the database no longer holds
                return swept;
            }
        });
    }

    private static void bindContext(PreparedStatement ps, int at, Key k) throws SQLException {
        bindStart(ps, at, k);
        ps.setString(at + 8, k.nextRowCursor());
    }

    /** {@link #CONTEXT_START}'s eight parameters from {@code at}. */
    private static void bindStart(PreparedStatement ps, int at, Key k) throws SQLException {
        ps.setString(at, k.partition());
        ps.setString(at + 1, k.logEpoch());
        ps.setString(at + 2, k.table());
        ps.setInt(at + 3, k.schemaVersion());
        ps.setInt(at + 4, k.mediaType());
        ps.setString(at + 5, k.scopeDigest());
        ps.setLong(at + 6, k.asOfCommitSeq());
        ps.setString(at + 7, k.rowCursor());
    }

    private static Publication read(ResultSet rs) throws SQLException {
        Key key = new Key(rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5), rs.getInt(6),
                rs.getString(7), rs.getLong(8), rs.getString(9), rs.getString(10));
        return new Publication(rs.getString(1), key, rs.getLong(11), rs.getLong(12), rs.getLong(13), rs.getLong(14));
    }

    /** Creates the segment tables if absent; called once at start so concurrent first requests never race on DDL. */
    public void install() { tables.install(); }

    private <T> T run(OwnTables.Work<T> work) { return tables.run(work); }
}

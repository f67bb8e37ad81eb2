package syncular.jakarta.storage;

import java.util.List;
import java.util.Optional;

/**
 * Content-addressed bootstrap segments (SPEC §5.1, §5.4, §5.5) with the seeds' publication model (seeds/002 README,
 * UPSTREAM-SERVER §3.12): the bytes are stored once under {@code sha256:<hex>} of the uncompressed bytes; each
 * context they were published under (partition, log epoch, table, schema version, media type, scope digest, pin,
 * row cursors) is a publication with its own lifetime. A download never unions grants across partitions or epochs.
 */
public interface SegmentStore {
    /** {@code sha256:} + lowercase hex of SHA-256 of the uncompressed bytes (§5.1): a segment's id. */
    static String segmentId(byte[] bytes) {
        try {
            return "sha256:" + java.util.HexFormat.of().formatHex(
                    java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Whether {@code s} has a segment id's form (§5.1), so it can name a key or a row. */
    static boolean isSegmentId(String s) { return s != null && s.matches("sha256:[0-9a-f]{64}"); }

    /** Stores the bytes (idempotent by content) and the publication; an equal context only extends its lifetime. */
    Publication publish(Publication publication, byte[] bytes);

    /**
     * Reuse: the newest publication of this context (pin included) that starts at the key's row cursor and is live at
     * {@code nowMs}. The key's {@code nextRowCursor} is ignored: where a page ends follows from where it starts, the
     * pin and the page's size, which the caller checks against what it would build.
     */
    Optional<Publication> find(Key key, long nowMs);

    /** Every publication of a segment in one partition and log epoch, newest first (live or expired). */
    List<Publication> publications(String segmentId, String partition, String logEpoch);

    /**
     * Every publication of a segment in any partition, newest first (live or expired): for a signed URL (§5.4),
     * whose token names the partition only by a keyed audience the caller matches.
     */
    List<Publication> publications(String segmentId);

    /** The stored bytes of a segment, if any publication still holds them. */
    Optional<byte[]> bytes(String segmentId);

    /** Deletes expired publications and segments no publication holds; returns how many segments went. */
    int sweepExpired(long nowMs);

    /** One publication of a segment. {@code rowCursor}/{@code nextRowCursor} null = first/last page. */
    record Publication(String segmentId, Key key, long byteLength, long rowCount, long createdAtMs, long expiresAtMs) {
        public boolean liveAt(long nowMs) { return expiresAtMs > nowMs; }
    }

    /** The reuse key (§5.1): everything a publication's context is. */
    record Key(String partition, String logEpoch, String table, int schemaVersion, int mediaType, String scopeDigest,
               long asOfCommitSeq, String rowCursor, String nextRowCursor) {
        /** Whether {@code other} is this context starting at the same row cursor, wherever it ends. */
        public boolean sameStart(Key other) {
            return equals(new Key(other.partition, other.logEpoch, other.table, other.schemaVersion, other.mediaType,
                    other.scopeDigest, other.asOfCommitSeq, other.rowCursor, nextRowCursor));
        }
    }
}

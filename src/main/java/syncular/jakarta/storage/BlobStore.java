package syncular.jakarta.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Content-addressed, durable blob bytes (SPEC §5.9.2; REF blob-store.ts): keyed per partition by {@code blobId}
 * ({@code sha256:} + lowercase hex of the bytes), written once, immutable, never served across partitions. Unlike
 * segments they have no TTL: a blob goes only when the orphan sweep finds no row referencing it (§5.9.2, §5.9.4; the
 * reference index lives in {@link ServerStorage}, not here, so a store in another system needs no access to it).
 *
 * <p>Streaming both ways: no method holds a whole blob in memory. The key is (partition, blobId) and nothing else,
 * so an object store can name an object {@code <prefix>/<partition>/<blobId>} and verify the content address itself
 * ({@code x-amz-checksum-sha256} is the blobId's digest). Thread-safe.
 */
public interface BlobStore {
    Pattern BLOB_ID = Pattern.compile("sha256:[0-9a-f]{64}");

    /** Whether {@code s} has the §5.9.1 blobId form. */
    static boolean isBlobId(String s) { return s != null && BLOB_ID.matcher(s).matches(); }

    /** How an upload ended. Nothing is stored unless the outcome is {@link #STORED}. */
    enum PutOutcome {
        /** The bytes hash to the blobId and are now present. */
        STORED,
        /** The blob was already present and the bytes hash to its id: nothing new was written (§5.9.3 idempotent). */
        ALREADY_PRESENT,
        /** The bytes do not hash to the blobId (§5.9.3 {@code blob.hash_mismatch}). */
        HASH_MISMATCH,
        /** More than {@code maxBytes} arrived (§5.9.3 {@code blob.too_large}); reading stopped there. */
        TOO_LARGE
    }

    /** What is known of a stored blob without reading it. {@code uploadedAtMs}: its latest (re-)upload. */
    record BlobInfo(String partition, String blobId, long byteLength, String mediaType, long uploadedAtMs) { }

    /**
     * Reads {@code body} to its end (or to the first byte past {@code maxBytes}), verifying while it streams that the
     * bytes hash to {@code blobId}; stores them only when they do. An already present blob is not written again, but
     * its bytes are still read and checked, so the outcome never depends on what is stored, and its upload time
     * moves to {@code nowMs} (a re-upload right before a push keeps an old unreferenced blob from the sweep).
     * {@code mediaType} (may be null) is advisory and kept as given by the first upload.
     *
     * @throws IOException when reading {@code body} fails; nothing is stored then
     */
    PutOutcome put(String partition, String blobId, InputStream body, long maxBytes, String mediaType, long nowMs)
            throws IOException;

    /** The stored blob's facts, or empty when it is not present. */
    Optional<BlobInfo> find(String partition, String blobId);

    /**
     * Writes the stored bytes to {@code out}, in order, a bounded piece at a time; false (nothing written) when the
     * blob is not present.
     *
     * @throws IOException when {@code out} fails, or when the blob disappears part way (it was swept: only an
     *                     unreferenced blob can be), so that a short body is never mistaken for the whole
     */
    boolean writeTo(String partition, String blobId, OutputStream out) throws IOException;

    /** Which of {@code blobIds} are present in the partition, in one look-up (the §5.9.6 push check). */
    Set<String> present(String partition, Collection<String> blobIds);

    /**
     * For a store that is also a {@link BlobPresigner}: checks the bytes that arrived straight at the store under a
     * presigned PUT (§5.9.3) for any of {@code blobIds}, and makes those that hash to their id present, as
     * {@link #put} would have (upload time {@code nowMs}); bytes that do not are discarded. Which became present.
     * This is the reference-time content-address check of §5.9.3: the object store does not hash what it receives,
     * so nothing PUT through a URL is a blob, nor served as one, until it has passed here. Called by the push
     * existence check for the blobs it found absent. A store that issues no presigned PUT has none to check.
     *
     * @throws IOException when reading the arrived bytes fails (they stay where they are, unchecked)
     */
    default Set<String> adoptDirectUploads(String partition, Collection<String> blobIds, long nowMs)
            throws IOException {
        return Set.of();
    }

    /**
     * The sweep's candidates (§5.9.2): blobs of every partition last uploaded before {@code cutoffMs}, oldest first,
     * strictly after {@code after} in that order (null: from the start), at most {@code limit}.
     */
    List<BlobInfo> uploadedBefore(long cutoffMs, BlobInfo after, int limit);

    /**
     * Deletes the blob if it is still last uploaded before {@code cutoffMs} (a re-upload since the listing keeps it);
     * whether it was deleted. The caller has checked that no row references it.
     */
    boolean delete(String partition, String blobId, long cutoffMs);

    /**
     * Removes the pieces of uploads started before {@code startedBeforeMs} that never completed, and direct uploads
     * (§5.9.3 presigned PUTs) that arrived before it and were never adopted; how many.
     */
    int purgeIncompleteUploads(long startedBeforeMs);
}

package syncular.jakarta.sync;

import java.io.IOException;
import java.io.InputStream;
import java.util.UUID;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.wire.ErrorCode;

/**
 * {@code PUT <mount>/blobs/{blobId}} and {@code POST <mount>/blobs/{blobId}/upload-grant} (SPEC §5.9.3; REF
 * blob-handlers.ts): host authentication only (uploading bytes is not a scope-bearing act), the size cap first (by
 * the declared length, then again on the streamed count), then the content address, which the store checks while the
 * bytes stream past. A present blob is an idempotent success. The grant flow has no presigned-upload store to mint
 * for here, so every grant answers "none" ({@code {}}) and the client streams through the PUT (a capability, not a
 * fallback); the cap still applies up front. Thread-safe.
 */
public final class BlobUpload {
    /** The reference's default cap (blob-handlers.ts {@code DEFAULT_MAX_BLOB_BYTES}): 64 MiB. */
    public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;

    private final ServerStorage storage;
    private final BlobStore store;
    private final Clock clock;
    private final long maxBytes;

    public BlobUpload(ServerStorage storage, BlobStore store, Clock clock, long maxBytes) {
        this.storage = storage;
        this.store = store;
        this.clock = clock;
        this.maxBytes = maxBytes;
    }

    /**
     * Streams {@code body} into the store. {@code declaredLength}: the body's declared size in decoded bytes, or -1
     * when unknown (absent, or a transport encoding); {@code mediaType} may be null.
     *
     * @throws IOException when reading the body fails (nothing is stored)
     */
    public BlobStore.PutOutcome upload(Identity identity, String blobId, InputStream body, long declaredLength,
                                       String mediaType) throws IOException {
        storage.touchPartition(identity.partition(), clock.nowMs(), UUID.randomUUID().toString());
        if (!BlobStore.isBlobId(blobId)) {
            throw new SyncException(ErrorCode.BLOB_HASH_MISMATCH, "blobId path is not \"sha256:<64 hex>\" (§5.9.1)");
        }
        if (declaredLength > maxBytes) throw tooLarge();
        BlobStore.PutOutcome outcome = store.put(identity.partition(), blobId, body, maxBytes, mediaType,
                clock.nowMs());
        return switch (outcome) {
            case STORED, ALREADY_PRESENT -> outcome;
            case TOO_LARGE -> throw tooLarge();
            case HASH_MISMATCH -> throw new SyncException(ErrorCode.BLOB_HASH_MISMATCH,
                    "uploaded bytes do not hash to the blobId path (§5.9.3)");
        };
    }

    /**
     * The §5.9.3 grant for a declared upload, as its JSON: {@code {}} (no presigned-upload store: PUT through the
     * server). {@code byteLength} null when the request did not carry a valid non-negative integer.
     */
    public String grant(Identity identity, String blobId, Long byteLength) {
        storage.touchPartition(identity.partition(), clock.nowMs(), UUID.randomUUID().toString());
        if (!BlobStore.isBlobId(blobId)) {
            throw new SyncException(ErrorCode.BLOB_HASH_MISMATCH, "blobId path is not \"sha256:<64 hex>\" (§5.9.1)");
        }
        // the reference answers a missing or malformed byteLength as over the cap, before any URL is minted
        if (byteLength == null || byteLength < 0 || byteLength > maxBytes) throw tooLarge();
        return "{}";
    }

    private SyncException tooLarge() {
        return new SyncException(ErrorCode.BLOB_TOO_LARGE, "blob exceeds the " + maxBytes + "-byte cap (§5.9.3)",
                "{\"limit\":\"syncular.blobs.max-bytes\",\"maxBytes\":" + maxBytes + "}");
    }
}

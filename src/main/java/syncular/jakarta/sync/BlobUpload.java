package syncular.jakarta.sync;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * {@code PUT <mount>/blobs/{blobId}} and {@code POST <mount>/blobs/{blobId}/upload-grant} (SPEC §5.9.3; REF
 * blob-handlers.ts): host authentication only (uploading bytes is not a scope-bearing act), the size cap first (by
 * the declared length, then again on the streamed count), then the content address, which the store checks while the
 * bytes stream past. A present blob is an idempotent success.
 *
 * <p>The grant (§5.9.3) checks the cap up front against the declared length, then, with {@link BlobUrls} active,
 * answers {@code {"present":true}} for a blob already present or a single-PUT URL: the object store's own (its bytes
 * are checked at reference time, {@link syncular.jakarta.storage.BlobStore#adoptDirectUploads}), or a native one
 * that comes back here as {@link #uploadSigned}, where the bytes are checked as they stream, as on the direct PUT.
 * Without URLs every grant answers "none" ({@code {}}) and the client streams through the PUT (a capability, not a
 * fallback). Thread-safe.
 */
public final class BlobUpload {
    /** The reference's default cap (blob-handlers.ts {@code DEFAULT_MAX_BLOB_BYTES}): 64 MiB. */
    public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;

    private final ServerStorage storage;
    private final BlobStore store;
    private final Clock clock;
    private final long maxBytes;
    private final BlobUrls urls;
    private final Optional<SignedUrls> signer;

    /**
     * {@code urls}: what a grant mints ({@link BlobUrls#NONE}: nothing); {@code signer}: the native scheme's verifier
     * for {@link #uploadSigned}, empty when this server mints no native upload URLs.
     */
    public BlobUpload(ServerStorage storage, BlobStore store, Clock clock, long maxBytes, BlobUrls urls,
                      Optional<SignedUrls> signer) {
        this.storage = storage;
        this.store = store;
        this.clock = clock;
        this.maxBytes = maxBytes;
        this.urls = urls;
        this.signer = signer;
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
        return store(identity.partition(), blobId, body, declaredLength, mediaType, maxBytes);
    }

    /**
     * {@code PUT <mount>/blobs/{blobId}?st=…}: the native upload URL of a grant, with no host authentication (the
     * token is the whole grant: 403 {@code blob.forbidden} when tampered with, for another blob or expired). The
     * bytes are checked exactly as on the direct PUT, and capped at the length the grant was given.
     *
     * @throws IOException when reading the body fails (nothing is stored)
     */
    public BlobStore.PutOutcome uploadSigned(String blobId, String token, InputStream body, long declaredLength,
                                             String mediaType) throws IOException {
        SignedUrls verifier = signer.orElseThrow(() -> new SyncException(ErrorCode.BLOB_NOT_FOUND,
                "signed upload URLs are not configured on this server"));
        SignedUrls.UploadGrant grant = verifier.verifyUpload(token, blobId, clock.nowMs());
        return store(grant.partition(), blobId, body, declaredLength, mediaType,
                Math.min(maxBytes, grant.byteLength()));
    }

    private BlobStore.PutOutcome store(String partition, String blobId, InputStream body, long declaredLength,
                                       String mediaType, long cap) throws IOException {
        if (declaredLength > cap) throw tooLarge(cap);
        BlobStore.PutOutcome outcome = store.put(partition, blobId, body, cap, mediaType, clock.nowMs());
        return switch (outcome) {
            case STORED, ALREADY_PRESENT -> outcome;
            case TOO_LARGE -> throw tooLarge(cap);
            case HASH_MISMATCH -> throw new SyncException(ErrorCode.BLOB_HASH_MISMATCH,
                    "uploaded bytes do not hash to the blobId path (§5.9.3)");
        };
    }

    /**
     * The §5.9.3 grant for a declared upload, as its JSON: {@code {}} (no upload URLs: PUT through the server),
     * {@code {"present":true}} or {@code {"url","urlExpiresAtMs"}}. {@code byteLength} null when the request did not
     * carry a valid non-negative integer.
     */
    public String grant(Identity identity, String blobId, Long byteLength) {
        storage.touchPartition(identity.partition(), clock.nowMs(), UUID.randomUUID().toString());
        if (!BlobStore.isBlobId(blobId)) {
            throw new SyncException(ErrorCode.BLOB_HASH_MISMATCH, "blobId path is not \"sha256:<64 hex>\" (§5.9.1)");
        }
        // the reference answers a missing or malformed byteLength as over the cap, before any URL is minted
        if (byteLength == null || byteLength < 0 || byteLength > maxBytes) throw tooLarge(maxBytes);
        if (!urls.active()) return "{}";
        // idempotent §5.9.3: a present blob needs no PUT; one PUT to the store but not yet referenced is not present
        if (store.find(identity.partition(), blobId).isPresent()) return "{\"present\":true}";
        SignedUrls.Issued issued = urls.upload(identity.partition(), blobId, byteLength, clock.nowMs());
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("url", issued.url());
        answer.put("urlExpiresAtMs", issued.urlExpiresAtMs());
        return Json.write(answer);
    }

    private SyncException tooLarge(long cap) {
        String limit = cap == maxBytes ? "syncular.blobs.max-bytes" : "upload grant";
        return new SyncException(ErrorCode.BLOB_TOO_LARGE, "blob exceeds the " + cap + "-byte cap (§5.9.3)",
                "{\"limit\":\"" + limit + "\",\"maxBytes\":" + cap + "}");
    }
}

package syncular.jakarta.sync;

import syncular.jakarta.storage.BlobPresigner;

/**
 * How a blob download and an upload grant answer when the bytes are to travel without this server's authenticated
 * endpoints (SPEC §5.9.3, §5.9.5 always-issue): the native HMAC scheme ({@link SignedUrls}, URLs this server serves
 * itself), the object store's own presigned URLs ({@link #presigned}), or {@link #NONE}: downloads inline, grants
 * answer "none" and the client PUTs through the server. Chosen by {@code syncular.blobs.urls}. Called only after
 * the download's row-derived authorization, or the grant's host authentication and size cap, have passed.
 * Thread-safe.
 */
public interface BlobUrls {
    /** No URLs: the bytes go through {@code PUT}/{@code GET <mount>/blobs/{blobId}}. */
    BlobUrls NONE = new BlobUrls() {
        @Override
        public boolean active() { return false; }

        @Override
        public SignedUrls.Issued download(String partition, String blobId, long nowMs) {
            throw new IllegalStateException("no blob URLs are configured");
        }

        @Override
        public SignedUrls.Issued upload(String partition, String blobId, long byteLength, long nowMs) {
            throw new IllegalStateException("no blob URLs are configured");
        }
    };

    /** Whether downloads answer a URL and grants mint one; when false neither method is called. */
    boolean active();

    /** The URL a download answers with (§5.9.5). */
    SignedUrls.Issued download(String partition, String blobId, long nowMs);

    /** The PUT URL of an upload grant for {@code byteLength} declared bytes (§5.9.3). */
    SignedUrls.Issued upload(String partition, String blobId, long byteLength, long nowMs);

    /**
     * The store's SigV4 (or other provider) URLs, valid for {@code ttlMs}; {@code urlExpiresAtMs} is the provider's
     * own expiry, which it enforces on its clock with no skew (§5.4 delegated presign). The signing time is the
     * real clock's, not {@code nowMs}: a URL signed on any other clock is one the provider would refuse.
     */
    static BlobUrls presigned(BlobPresigner presigner, long ttlMs) {
        return new BlobUrls() {
            @Override
            public boolean active() { return true; }

            @Override
            public SignedUrls.Issued download(String partition, String blobId, long nowMs) {
                BlobPresigner.Presigned p = presigner.presignGet(partition, blobId, ttlMs);
                return new SignedUrls.Issued(p.url(), p.expiresAtMs());
            }

            @Override
            public SignedUrls.Issued upload(String partition, String blobId, long byteLength, long nowMs) {
                BlobPresigner.Presigned p = presigner.presignPut(partition, blobId, byteLength, ttlMs);
                return new SignedUrls.Issued(p.url(), p.expiresAtMs());
            }
        };
    }
}

package syncular.jakarta.storage;

/**
 * A blob store that hands out provider-signed URLs to its own objects (SPEC §5.9.3 presigned upload, §5.9.5
 * delegated presign): fetchable and writable with no credentials but the URL, until it expires. The signed object key
 * embeds the blobId. Bytes PUT through such a URL are not yet a blob: the store does not know they hash to their id
 * until {@link BlobStore#adoptDirectUploads} has checked them. Thread-safe.
 */
public interface BlobPresigner {
    /** A provider-signed URL and the instant the provider stops honouring it. */
    record Presigned(String url, long expiresAtMs) { }

    /** A GET of the stored blob, valid for {@code ttlMs}. */
    Presigned presignGet(String partition, String blobId, long ttlMs);

    /**
     * A single PUT (never multipart, §5.9.3) of exactly {@code byteLength} bytes for {@code blobId}, valid for
     * {@code ttlMs}. The length is signed, so the object store refuses a body of any other size.
     */
    Presigned presignPut(String partition, String blobId, long byteLength, long ttlMs);
}

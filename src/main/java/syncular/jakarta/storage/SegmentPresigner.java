package syncular.jakarta.storage;

/**
 * A segment store whose objects a client can fetch straight from the store by a provider-signed URL (SPEC §5.4
 * "delegated presign"): the signed object key embeds the segment id, so the grant is bound to exactly one immutable
 * object, and the provider enforces the expiry (with no skew allowance).
 */
public interface SegmentPresigner {
    /** A GET URL for the segment's bytes, valid for {@code ttlMs} (whole seconds) from the provider's clock. */
    Presigned presignGet(String segmentId, long ttlMs);

    /** The URL and the instant the provider stops honoring it. */
    record Presigned(String url, long expiresAtMs) { }
}

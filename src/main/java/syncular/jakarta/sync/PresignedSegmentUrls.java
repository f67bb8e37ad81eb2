package syncular.jakarta.sync;

import syncular.jakarta.storage.SegmentPresigner;

/**
 * SPEC §5.4 delegated presign: a descriptor's URL is the store's provider-signed GET of the segment's immutable
 * object, so the bytes travel from the bucket (or a CDN in front of it) and never through this server. The native token's
 * {@code sd}/{@code aud} bindings are absent on purpose: authorization happened at issuance, inside the pull, and the
 * signed key names exactly one content address. Expiry is the provider's, with no skew allowance; a client past
 * {@code urlExpiresAtMs} pulls again for a fresh URL, as for {@code sync.segment_expired}.
 */
public final class PresignedSegmentUrls implements SegmentUrls {
    private final SegmentPresigner presigner;
    private final long ttlMs;

    /** {@code ttlMs}: whole seconds, at most the spec's 15 minutes (checked where it is configured). */
    public PresignedSegmentUrls(SegmentPresigner presigner, long ttlMs) {
        this.presigner = presigner;
        this.ttlMs = ttlMs;
    }

    @Override
    public SignedUrls.Issued issue(String segmentId, String scopeDigest, String partition, long nowMs) {
        SegmentPresigner.Presigned signed = presigner.presignGet(segmentId, ttlMs);
        return new SignedUrls.Issued(signed.url(), signed.expiresAtMs());
    }
}

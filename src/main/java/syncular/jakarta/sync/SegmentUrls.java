package syncular.jakarta.sync;

/**
 * Issues the {@code url}/{@code urlExpiresAtMs} pair of a SEGMENT_REF (SPEC §5.4) for a client that set accept bit
 * 3: the native HMAC scheme ({@link SignedUrls}) or a store's presigned GET ({@link PresignedSegmentUrls}). Called
 * only inside the pull, right after the subscription's scopes were resolved into {@code scopeDigest}, so a URL is
 * never minted for scopes the actor did not hold at that moment.
 */
public interface SegmentUrls {
    SignedUrls.Issued issue(String segmentId, String scopeDigest, String partition, long nowMs);
}

package syncular.jakarta.sync;

/**
 * Server-side limits of the protocol engine (SPEC-DIGEST §4 defaults; {@code syncular.limits.*}).
 *
 * @param maxOperationsPerRequest §6.1 operation cap over all PUSH_COMMITs of a request (REF default 500)
 * @param inlineSegmentMaxBytes   §5.7 largest rows segment sent inline when the client also accepts references
 * @param maxResponseBytes        byte budget of one response body; sections stop at a page/commit boundary
 * @param segmentTtlMs            lifetime of a published segment (§5.1, default 24 h)
 */
public record SyncSettings(int maxOperationsPerRequest, int inlineSegmentMaxBytes, long maxResponseBytes,
                           long segmentTtlMs) {
    public static final SyncSettings DEFAULTS = new SyncSettings(500, 256 * 1024, 8L * 1024 * 1024, 24L * 3600 * 1000);
}

package syncular.jakarta.sync;

/**
 * Server-side limits of the protocol engine (SPEC-DIGEST §4 defaults; {@code syncular.limits.*}).
 *
 * @param maxOperationsPerRequest    §6.1 operation cap over all PUSH_COMMITs of a request (REF default 500)
 * @param inlineSegmentMaxBytes      §5.7 largest rows segment sent inline when the client also accepts references
 * @param maxResponseBytes           byte budget of one response body; sections stop at a page/commit boundary, and
 *                                   no single bootstrap page (inline or published) is larger
 * @param segmentTtlMs               lifetime of a published segment (§5.1, default 24 h)
 * @param maxSubscriptionsPerRequest SUBSCRIPTION frames one request may carry; each costs a log or row scan, so
 *                                   an uncapped list lets one request occupy the database (the spec sets no cap)
 * @param admission                  how many requests of one partition push at once, and wait for a turn
 *                                   ({@link PartitionAdmission}, issue 13)
 * @param maxCascadeOperationsPerCommit §6.11: operations declared references may append to one commit (CASCADE
 *                                   deletes, SET NULL upserts); one more rejects it {@code cascade_limit}
 * @param pageCacheBytes             bootstrap pages sent inline that a node keeps in memory by the context they were
 *                                   built in (pin, scopes, where they start, their size limits), so the clients of a
 *                                   storm at one pin get them without a row read and an encoding each (issue 15);
 *                                   0 keeps none
 * @param recentCommitBytes          the log's recent tail kept in memory ({@link RecentCommits}), so a pull whose
 *                                   window lies within it reads no window from the database (issue 15); 0 keeps none
 */
public record SyncSettings(int maxOperationsPerRequest, int inlineSegmentMaxBytes, long maxResponseBytes,
                           long segmentTtlMs, int maxSubscriptionsPerRequest, PartitionAdmission.Settings admission,
                           int maxCascadeOperationsPerCommit, long pageCacheBytes,
                           long recentCommitBytes) {
    /** Far above what real apps send (a few, or tens with §4.8 windowing), low enough to bound one request. */
    public static final int DEFAULT_MAX_SUBSCRIPTIONS_PER_REQUEST = 1000;

    public static final SyncSettings DEFAULTS = new SyncSettings(500, 256 * 1024, 8L * 1024 * 1024, 24L * 3600 * 1000,
            DEFAULT_MAX_SUBSCRIPTIONS_PER_REQUEST, PartitionAdmission.Settings.DEFAULTS,
            DeclaredReferences.DEFAULT_MAX_CASCADE_OPERATIONS, 64L * 1024 * 1024, 16L * 1024 * 1024);

    public SyncSettings withMaxSubscriptionsPerRequest(int max) {
        return new SyncSettings(maxOperationsPerRequest, inlineSegmentMaxBytes, maxResponseBytes, segmentTtlMs, max,
                admission, maxCascadeOperationsPerCommit, pageCacheBytes, recentCommitBytes);
    }
}

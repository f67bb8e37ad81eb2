package syncular.jakarta.sync;

import java.util.Optional;
import syncular.jakarta.host.Clock;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SegmentRef;

/**
 * Publishes a bootstrap page for delivery by reference (SPEC §5.4): content-addressed bytes, a publication in the
 * page's context with the segment TTL, and a SEGMENT_REF describing it; whole-table SQLite images through the
 * {@link SqliteImageLane} when one is given. Never sends a {@code url}: signed URLs are not configured (accept bit 3
 * is ignored, §5.4: clients then use the direct endpoint).
 */
public final class SegmentPublishing implements PullProcessor.SegmentPublisher {
    private final SegmentStore store;
    private final Clock clock;
    private final long ttlMs;
    private final Optional<SqliteImageLane> images;

    /** {@code images}: the §5.3 lane, or empty when this server serves the rows lane only. */
    public SegmentPublishing(SegmentStore store, Clock clock, long ttlMs, Optional<SqliteImageLane> images) {
        this.store = store;
        this.clock = clock;
        this.ttlMs = ttlMs;
        this.images = images;
    }

    @Override
    public Optional<ResponseFrame> image(StorageSession session, PullProcessor.SegmentRequest request,
                                         TableSchema table, ScopeFilter scopes, int limitSnapshotRows) {
        return images.flatMap(lane -> lane.image(session, request, table, scopes, limitSnapshotRows));
    }

    @Override
    public ResponseFrame publish(PullProcessor.SegmentRequest r, byte[] bytes) {
        long now = clock.nowMs();
        String id = SegmentStore.segmentId(bytes);
        SegmentStore.Key key = new SegmentStore.Key(r.partition(), r.logEpoch(), r.table(), r.schemaVersion(),
                SegmentRef.MediaType.ROWS.code(), r.scopeDigest(), r.asOfCommitSeq(), r.rowCursor(), r.nextRowCursor());
        store.publish(new SegmentStore.Publication(id, key, bytes.length, r.rowCount(), now, now + ttlMs), bytes);
        return new SegmentRef(id, SegmentRef.MediaType.ROWS, r.table(), bytes.length, r.rowCount(), r.asOfCommitSeq(),
                r.scopeDigest(), r.rowCursor(), r.nextRowCursor(), null, null);
    }
}

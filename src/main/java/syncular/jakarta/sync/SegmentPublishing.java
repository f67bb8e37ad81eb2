package syncular.jakarta.sync;

import java.util.Optional;
import java.util.function.LongPredicate;
import java.util.function.Predicate;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.events.ServerEvents;
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
 * {@link SqliteImageLane} when one is given. With {@link SegmentUrls} configured (native signed URLs or the store's
 * presigned GETs), a descriptor for a client that set accept bit 3 carries a {@code url} and {@code urlExpiresAtMs};
 * without bit 3, or with URLs off, it carries neither (§5.4: the client then uses the direct endpoint). Issuance runs
 * inside the pull, after the subscription's scopes were resolved into the digest the URL binds.
 */
public final class SegmentPublishing implements PullProcessor.SegmentPublisher {
    private final SegmentStore store;
    private final Clock clock;
    private final long ttlMs;
    private final Optional<SqliteImageLane> images;
    private final Optional<SegmentUrls> urls;
    private final ServerEvents events;
    /**
     * The newest rows-page publication this node published or reused per context without its pin (issue 15), at
     * most {@value #KNOWN_CONTEXTS} contexts, least recently used out first: a bootstrap at a newer pin finds it
     * without asking the store, and reuses it where the scopes saw no change since ({@link #reuse}).
     */
    private final java.util.LinkedHashMap<Context, SegmentStore.Publication> known =
            new java.util.LinkedHashMap<>(64, 0.75f, true);
    static final int KNOWN_CONTEXTS = 4_096;

    /** A rows page's context without its pin: partition, log epoch, table, schema version, scopes, first row. */
    private record Context(String partition, String logEpoch, String table, int schemaVersion, String scopeDigest,
                           String rowCursor) {
        static Context of(SegmentStore.Key k) {
            return new Context(k.partition(), k.logEpoch(), k.table(), k.schemaVersion(), k.scopeDigest(),
                    k.rowCursor());
        }
    }

    /**
     * {@code images}: the §5.3 lane, or empty when this server serves the rows lane only; {@code urls}: the §5.4
     * issuer, or empty when segment URLs are off; {@code events}: a {@code segment.built} or {@code segment.reused}
     * event per rows page published or reused (the image lane emits its own).
     */
    public SegmentPublishing(SegmentStore store, Clock clock, long ttlMs, Optional<SqliteImageLane> images,
                             Optional<SegmentUrls> urls, ServerEvents events) {
        this.store = store;
        this.clock = clock;
        this.ttlMs = ttlMs;
        this.images = images;
        this.urls = urls;
        this.events = events;
    }

    /** The {@code segment.built} or {@code segment.reused} event of a publication a pull got. */
    static ServerEvent event(SegmentStore.Publication p, boolean reused, long nowMs) {
        SegmentStore.Key k = p.key();
        String mediaType = k.mediaType() == SegmentRef.MediaType.SQLITE.code() ? SegmentRef.MediaType.SQLITE.jsonName()
                : SegmentRef.MediaType.ROWS.jsonName();
        return reused
                ? new ServerEvent.SegmentReused(nowMs, k.partition(), p.segmentId(), k.table(), mediaType,
                        p.byteLength(), p.rowCount())
                : new ServerEvent.SegmentBuilt(nowMs, k.partition(), p.segmentId(), k.table(), mediaType,
                        p.byteLength(), p.rowCount());
    }

    @Override
    public Optional<ResponseFrame> image(StorageSession session, PullProcessor.SegmentRequest request,
                                         TableSchema table, ScopeFilter scopes, int limitSnapshotRows) {
        return images.flatMap(lane -> lane.image(session, request, table, scopes, limitSnapshotRows))
                .<ResponseFrame>map(ref -> withUrl(ref, request));
    }

    @Override
    public ResponseFrame publish(PullProcessor.SegmentRequest r, byte[] bytes) {
        long now = clock.nowMs();
        String id = SegmentStore.segmentId(bytes);
        SegmentStore.Publication published = store.publish(new SegmentStore.Publication(id, rowsPage(r), bytes.length,
                r.rowCount(), now, now + ttlMs), bytes);
        remember(published);
        events.emit(event(published, false, now));
        return withUrl(new SegmentRef(id, SegmentRef.MediaType.ROWS, r.table(), bytes.length, r.rowCount(),
                r.asOfCommitSeq(), r.scopeDigest(), r.rowCursor(), r.nextRowCursor(), null, null), r);
    }

    /**
     * Only a publication live for at least half a segment TTL more is reused, so that a client that gets its
     * descriptor has about as long to download it as from a page built for it (§5.5: an expired one costs a retry).
     * The newest publication of the context this node knows of serves any pin it is not older than, and an older
     * pin's where {@code unchangedSince} it; otherwise the store is asked for one at the request's pin. The
     * descriptor always carries the request's pin: a segment's bytes hold none, and a download selects any live
     * publication of the segment in its partition and log epoch.
     */
    @Override
    public Optional<SegmentRef> reuse(PullProcessor.SegmentRequest r, Predicate<SegmentRef> fits,
                                      LongPredicate unchangedSince) {
        long now = clock.nowMs();
        long liveAt = now + ttlMs / 2;
        SegmentStore.Key key = rowsPage(r);
        SegmentStore.Publication newest;
        synchronized (known) {
            newest = known.get(Context.of(key));
        }
        Optional<SegmentRef> ref = Optional.empty();
        if (newest != null && newest.liveAt(liveAt) && (newest.key().asOfCommitSeq() >= r.asOfCommitSeq()
                || unchangedSince.test(newest.key().asOfCommitSeq()))) {
            ref = Optional.of(described(newest, r)).filter(fits);
        }
        if (ref.isEmpty()) {
            Optional<SegmentStore.Publication> found = store.find(key, liveAt);
            found.ifPresent(this::remember);
            newest = found.orElse(null);
            ref = found.map(p -> described(p, r)).filter(fits);
        }
        if (ref.isEmpty()) return Optional.empty();
        events.emit(event(newest, true, now));
        return Optional.of(withUrl(ref.get(), r));
    }

    /** {@code p}'s page described at {@code r}'s pin. */
    private static SegmentRef described(SegmentStore.Publication p, PullProcessor.SegmentRequest r) {
        return new SegmentRef(p.segmentId(), SegmentRef.MediaType.ROWS, r.table(), p.byteLength(), p.rowCount(),
                r.asOfCommitSeq(), r.scopeDigest(), r.rowCursor(), p.key().nextRowCursor(), null, null);
    }

    /** Keeps {@code p} as its context's newest unless one at a newer pin (or as new and longer lived) is kept. */
    private void remember(SegmentStore.Publication p) {
        Context context = Context.of(p.key());
        synchronized (known) {
            SegmentStore.Publication kept = known.get(context);
            long keptPin = kept == null ? -1 : kept.key().asOfCommitSeq();
            long pin = p.key().asOfCommitSeq();
            if (kept != null && (keptPin > pin || keptPin == pin && kept.expiresAtMs() >= p.expiresAtMs())) return;
            known.put(context, p);
            if (known.size() > KNOWN_CONTEXTS) known.remove(known.keySet().iterator().next());
        }
    }

    private static SegmentStore.Key rowsPage(PullProcessor.SegmentRequest r) {
        return new SegmentStore.Key(r.partition(), r.logEpoch(), r.table(), r.schemaVersion(),
                SegmentRef.MediaType.ROWS.code(), r.scopeDigest(), r.asOfCommitSeq(), r.rowCursor(), r.nextRowCursor());
    }

    /** §4.2/§5.4 gating: a url only for a client that advertised bit 3, and only when this server issues them. */
    private SegmentRef withUrl(SegmentRef ref, PullProcessor.SegmentRequest r) {
        if (!r.signedUrl() || urls.isEmpty()) return ref;
        SignedUrls.Issued issued = urls.get().issue(ref.segmentId(), ref.scopeDigest(), r.partition(), clock.nowMs());
        return new SegmentRef(ref.segmentId(), ref.mediaType(), ref.table(), ref.byteLength(), ref.rowCount(),
                ref.asOfCommitSeq(), ref.scopeDigest(), ref.rowCursor(), ref.nextRowCursor(), issued.url(),
                issued.urlExpiresAtMs());
    }
}

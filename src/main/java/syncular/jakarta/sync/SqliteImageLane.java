package syncular.jakarta.sync;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.logging.Level;
import java.util.logging.Logger;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.Clock;
import syncular.jakarta.image.SqliteImageWriter;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SegmentRef;

/**
 * The SQLite-image lane of a bootstrap (SPEC §5.3, REF {@code sqliteImageSegment}): one whole-table image per
 * (partition, log epoch, table, schema version, scope digest, pin), reused while its publication lives and never
 * rebuilt per client. The caller decides eligibility by position (accept bit 2, the start of a table); this lane adds
 * the size rule: only a snapshot larger than one rows page gets an image, smaller ones stay on the (inline) rows lane.
 *
 * <p>Building: the snapshot is read in keyset pages straight into the image file, and the request's database
 * connection goes back to the pool between pages and while the file is finished, hashed and stored; no lock is taken
 * (a pull never takes the partition lock). Concurrent requests for one context on this node wait for the one build
 * (without a connection); a node that finds a live image published meanwhile by another node serves that one and
 * drops its own, so clients converge on one segment id. Builds run at most {@code concurrentBuilds} at a time. An
 * image that cannot be built (disk, the native library) is logged and the rows lane serves the table: images are a
 * capability the client accepts, never a demand (§5.3).
 */
public final class SqliteImageLane {
    private static final Logger LOG = Logger.getLogger(SqliteImageLane.class.getName());
    /** Rows read from the database per round trip while an image is built. */
    static final int SCAN_PAGE_ROWS = 5_000;

    private final SegmentStore store;
    private final Clock clock;
    private final long ttlMs;
    private final Path directory;
    private final Semaphore builds;
    private final ConcurrentHashMap<SegmentStore.Key, CompletableFuture<Optional<SegmentStore.Publication>>> building =
            new ConcurrentHashMap<>();

    private final ServerEvents events;

    /**
     * {@code directory}: where image files are built (scratch, deleted after each build); {@code events}: a
     * {@code segment.built} or {@code segment.reused} event per image a pull gets (issue 20).
     */
    public SqliteImageLane(SegmentStore store, Clock clock, long ttlMs, Path directory, int concurrentBuilds,
                           ServerEvents events) {
        this.events = events;
        this.store = store;
        this.clock = clock;
        this.ttlMs = ttlMs;
        this.directory = directory;
        this.builds = new Semaphore(Math.max(1, concurrentBuilds));
    }

    /**
     * The image's SEGMENT_REF for {@code request}'s context (its cursors are ignored: an image has none), or empty
     * when the table's snapshot fits one page of {@code limitSnapshotRows} rows or no image could be built.
     */
    public Optional<SegmentRef> image(StorageSession session, PullProcessor.SegmentRequest request, TableSchema table,
                                      ScopeFilter scopes, int limitSnapshotRows) {
        SegmentStore.Key key = new SegmentStore.Key(request.partition(), request.logEpoch(), request.table(),
                request.schemaVersion(), SegmentRef.MediaType.SQLITE.code(), request.scopeDigest(),
                request.asOfCommitSeq(), null, null);
        Optional<SegmentStore.Publication> live = store.find(key, clock.nowMs());
        if (live.isPresent()) {
            emit(live.get(), true);
        } else {
            List<StoredRow> probe = session.scanRows(new RowScanQuery(table.name(), scopes, null,
                    limitSnapshotRows + 1));
            if (probe.size() <= limitSnapshotRows) return Optional.empty();
            live = buildOnce(session, key, table, scopes, probe);
        }
        return live.map(p -> new SegmentRef(p.segmentId(), SegmentRef.MediaType.SQLITE, table.name(), p.byteLength(),
                p.rowCount(), p.key().asOfCommitSeq(), p.key().scopeDigest(), null, null, null, null));
    }

    private Optional<SegmentStore.Publication> buildOnce(StorageSession session, SegmentStore.Key key,
                                                         TableSchema table, ScopeFilter scopes, List<StoredRow> probe) {
        CompletableFuture<Optional<SegmentStore.Publication>> mine = new CompletableFuture<>();
        CompletableFuture<Optional<SegmentStore.Publication>> running = building.putIfAbsent(key, mine);
        if (running != null) {
            session.release();   // no connection held while another request builds this image
            try {
                Optional<SegmentStore.Publication> theirs = running.join();
                theirs.ifPresent(p -> emit(p, true));
                return theirs;
            } catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
        }
        try {
            Optional<SegmentStore.Publication> built = build(session, key, table, scopes, probe);
            mine.complete(built);
            return built;
        } catch (RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            building.remove(key, mine);
        }
    }

    private Optional<SegmentStore.Publication> build(StorageSession session, SegmentStore.Key key, TableSchema table,
                                                     ScopeFilter scopes, List<StoredRow> probe) {
        // a build that finished between this request's lookup and its turn: serve that one
        Optional<SegmentStore.Publication> live = store.find(key, clock.nowMs());
        if (live.isPresent()) {
            emit(live.get(), true);
            return live;
        }
        session.release();
        builds.acquireUninterruptibly();
        byte[] bytes;
        long rows;
        try (SqliteImageWriter image = new SqliteImageWriter(directory, table.name(), table.descriptors(),
                table.primaryKey())) {
            addAll(image, table, probe);
            String after = probe.get(probe.size() - 1).rowId();
            while (true) {
                List<StoredRow> page = session.scanRows(new RowScanQuery(table.name(), scopes, after, SCAN_PAGE_ROWS));
                session.release();
                addAll(image, table, page);
                if (page.size() < SCAN_PAGE_ROWS) break;
                after = page.get(page.size() - 1).rowId();
            }
            rows = image.rowCount();
            bytes = image.finish(key.schemaVersion(), key.asOfCommitSeq(), key.scopeDigest());
        } catch (SqliteImageWriter.ImageException e) {
            LOG.log(Level.WARNING, "a SQLite image of table " + table.name() + " could not be built; the rows lane"
                    + " serves it", e);
            return Optional.empty();
        } finally {
            builds.release();
        }
        long now = clock.nowMs();
        // another node may have published one for this context meanwhile: every client gets that one (§5.3 reuse)
        live = store.find(key, now);
        if (live.isPresent()) {
            emit(live.get(), true);
            return live;
        }
        SegmentStore.Publication built = store.publish(new SegmentStore.Publication(SegmentStore.segmentId(bytes), key,
                bytes.length, rows, now, now + ttlMs), bytes);
        emit(built, false);
        return Optional.of(built);
    }

    private void emit(SegmentStore.Publication p, boolean reused) {
        events.emit(SegmentPublishing.event(p, reused, clock.nowMs()));
    }

    private static void addAll(SqliteImageWriter image, TableSchema table, List<StoredRow> rows) {
        for (StoredRow r : rows) image.add(r.serverVersion(), RowCodec.decode(table.descriptors(), r.payload()));
    }
}

package syncular.jakarta.sync;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongPredicate;
import java.util.function.Predicate;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.CommitWindow;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.RequestEnd;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.SegmentBytesCache;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.RowsSegmentWriter;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * One subscription's section of a pull response (SPEC §4, REF {@code subscriptionSection}): revoked → reset behind
 * the horizon → bootstrap (token, never synced, or cursor beyond the log) → incremental. Bootstrap pages are SSG2
 * rows segments at a pinned {@code asOfCommitSeq}, keyset-paged by row id in byte order; incremental windows never
 * split a commit, count changes, and advance the cursor over quiet stretches.
 *
 * <p>The response byte budget is shared by all sections: once it is spent, a section stops at a page or commit
 * boundary (the first page or commit of the response always goes) and its token or cursor carries the rest. A
 * bootstrap page is capped in bytes as well as rows: one that can only go inline stops at what is left of the budget,
 * one that may be published stops at the whole budget (its download is one response too); a row larger than the cap
 * still goes, alone, so every response makes progress.
 */
public final class PullProcessor {
    /** What a kept inline page costs the memory besides its bytes (its key and record), closely enough. */
    static final long KEPT_PAGE_OVERHEAD = 256;
    /** What a SEGMENT_INLINE frame adds around its segment bytes (type and length). */
    static final long INLINE_FRAME_OVERHEAD = 5;
    /** A SEGMENT_REF frame's share of the response budget (descriptor, URL), closely enough. */
    static final long REF_FRAME_BYTES = 256;

    private final SegmentPublisher segments;
    private final SegmentBytesCache<PageKey, BuiltPage> inlinePages;
    private final RecentCommits recent;
    /** Pages being built for delivery by reference, by their keys without a pin ({@link Building}). */
    private final ConcurrentHashMap<PageKey, CompletableFuture<Void>> building = new ConcurrentHashMap<>();
    /** How long a request waits for another one's build of the page it needs before it builds the page itself. */
    static final long BUILD_WAIT_MS = 10_000;
    /**
     * How long a bootstrap waits for the recent tail to be given its pin (the feed announces a commit moments after
     * the request read the log head) before it reads its pages again: a page read costs far longer.
     */
    static final long TAIL_WAIT_MS = 50;

    /**
     * {@code segments}: where pages sent by reference go (null: none are); {@code pageCacheBytes}: how many bytes of
     * the pages it sends inline this node keeps for the next client at the same pin (0: none); {@code recent}: the
     * log's recent tail, which answers the windows that lie within it.
     */
    public PullProcessor(SegmentPublisher segments, long pageCacheBytes, RecentCommits recent) {
        this.segments = segments;
        this.inlinePages = new SegmentBytesCache<>(pageCacheBytes, p -> p.bytes().length + KEPT_PAGE_OVERHEAD);
        this.recent = recent;
    }

    /** Publishes segments for SEGMENT_REF delivery (§5.4), or is absent when none is configured. */
    public interface SegmentPublisher {
        /** A rows segment (§5.2) of one page. */
        ResponseFrame publish(SegmentRequest request, byte[] segmentBytes);

        /**
         * A rows page already published in {@code request}'s context (scopes, schema, log epoch) that starts at its
         * row cursor and that {@code fits} the page this request would build, by reference: a storm of clients
         * bootstrapping one pin reads and encodes each page once, not once per client (issue 15). A page published
         * at another pin serves this one if its pin is not older, or if {@code unchangedSince} that pin (a client
         * there would pull an empty window through this one). Empty when there is none or it does not fit, and
         * always from a publisher that keeps nothing it published (this default).
         */
        default Optional<SegmentRef> reuse(SegmentRequest request, Predicate<SegmentRef> fits,
                                           LongPredicate unchangedSince) {
            return Optional.empty();
        }

        /**
         * §5.3: the whole-table SQLite image of the request's context, reused or built once ({@link SqliteImageLane});
         * empty when images are off (this default: a publisher of rows segments only) or the table's snapshot
         * fits one rows page, and the rows lane serves it.
         */
        default Optional<ResponseFrame> image(StorageSession session, SegmentRequest request, TableSchema table,
                                              ScopeFilter scopes, int limitSnapshotRows) {
            return Optional.empty();
        }
    }

    /** What a published segment describes (the §7.1 reuse key parts). */
    public record SegmentRequest(String partition, String logEpoch, String table, int schemaVersion, String scopeDigest,
                                 long asOfCommitSeq, long rowCount, String rowCursor, String nextRowCursor,
                                 boolean signedUrl) { }

    /** A planned subscription: the request frame, its table and its effective scopes (empty = revoked). */
    public record Plan(Subscription subscription, TableSchema table, Optional<Map<String, List<String>>> effective) { }

    /** Shared per-response state: the budget, the pin inputs, the partition. */
    public static final class Budget {
        private final long maxBytes;
        private long used;
        private boolean anythingSent;

        public Budget(long maxBytes) { this.maxBytes = maxBytes; }

        boolean allows(long more) { return !anythingSent || used + more <= maxBytes; }

        long maxBytes() { return maxBytes; }

        /** The most segment bytes an inline frame may still carry (the first frame of a response: the whole budget). */
        long inlineRoom() { return (anythingSent ? maxBytes - used : maxBytes) - INLINE_FRAME_OVERHEAD; }

        void spend(long bytes) {
            used += bytes;
            anythingSent = true;
        }

        public long used() { return used; }
    }

    /**
     * A section's frames and the cursor it records for the retention watermark (active sections only); with the
     * serve gate read after its window when a {@link RequestEnd} rode on that read and stored its record.
     */
    public record Section(List<ResponseFrame> frames, long nextCursor, boolean active, Optional<ServeGate> endGate) {
        Section(List<ResponseFrame> frames, long nextCursor, boolean active) {
            this(frames, nextCursor, active, Optional.empty());
        }
    }

    /** The cursor a section records when its window is the rest of the log through {@code maxSeq}. */
    static long completeCursor(Subscription sub, long maxSeq) { return Math.max(sub.cursor(), maxSeq); }

    private static Section reset(Subscription sub) {
        return new Section(List.of(SubStart.reset(sub.id()), new SubEnd(sub.cursor(), null)), sub.cursor(), false);
    }

    /**
     * One subscription's section. {@code end}, for the request's last section: the request's end rides on the window
     * read if the section reads one (an incremental pull); the caller checks that the record it would store is the
     * one the end stored ({@link Section#endGate()} present), else it ends the request on its own round trip.
     */
    public Section section(StorageSession session, String logEpoch, CompiledSchema schema, PullLimits limits, Plan plan,
                           long maxSeq, long horizonSeq, int inlineMaxBytes, Budget budget,
                           Optional<RequestEnd> end) {
        Subscription sub = plan.subscription();
        List<ResponseFrame> frames = new ArrayList<>();
        if (plan.effective().isEmpty()) {
            frames.add(SubStart.revoked(sub.id()));
            frames.add(new SubEnd(sub.cursor(), null));
            return new Section(frames, sub.cursor(), false);
        }
        Map<String, List<String>> effective = plan.effective().get();
        Optional<BootstrapToken> token = BootstrapToken.parse(sub.bootstrapStateJson(), sub.table());
        if (token.isEmpty() && sub.cursor() >= 0 && sub.cursor() < horizonSeq) return reset(sub);
        boolean bootstrapping = token.isPresent() || sub.cursor() < 0 || sub.cursor() > maxSeq;
        if (bootstrapping) {
            // A pin below the horizon can no longer be completed consistently: restart with a fresh pin (§4.7).
            Optional<BootstrapToken> resume = token.filter(t -> t.asOfCommitSeq() >= horizonSeq
                    && t.asOfCommitSeq() <= maxSeq);
            long asOf = resume.map(BootstrapToken::asOfCommitSeq).orElse(maxSeq);
            String rowCursor = resume.map(BootstrapToken::rowCursor).orElse(null);
            int start = frames.size();
            frames.add(SubStart.active(sub.id(), effective, true));
            Resume next = bootstrapPages(session, logEpoch, schema, limits, plan.table(), effective, asOf, rowCursor,
                    inlineMaxBytes, budget, frames);
            // SUB_START.bootstrap is true iff the section carries segments: an earlier section may have spent the
            // budget before this one's first page, and then only the token (possibly from the start) goes out.
            if (frames.size() == start + 1) frames.set(start, SubStart.active(sub.id(), effective, false));
            frames.add(new SubEnd(asOf, next == null ? null
                    : BootstrapToken.of(asOf, sub.table(), next.rowCursor()).toJson()));
            return new Section(frames, asOf, true);
        }

        // a window the recent tail holds is read from it; the request's end then takes its own round trip
        CommitWindowQuery query = new CommitWindowQuery(sub.table(), new ScopeFilter(effective), sub.cursor(), maxSeq,
                limits.limitCommits() + 1);
        CommitWindow window = recent.window(session.partition(), logEpoch, query)
                .orElseGet(() -> session.readCommitWindow(query, end));
        // §4.6: the horizon passed in was read before the window; a prune that committed in between (or while the
        // window was read) deleted commits the window then lacks, and delivering it would move the cursor past
        // them. The horizon read right after the window shows it: answer the reset, as if the prune had come first.
        if (window.prunedUnder(sub.cursor())) return reset(sub);
        List<StoredCommit> commits = window.commits();
        frames.add(SubStart.active(sub.id(), effective, false));
        int delivered = 0;
        int deliveredCommits = 0;
        long lastDelivered = sub.cursor();
        boolean budgetStop = false;
        for (StoredCommit commit : commits) {
            if (delivered > 0 && delivered + commit.changes().size() > limits.limitCommits()) break;
            CommitFrame frame = commitFrame(sub.table(), commit);
            long size = estimate(frame);
            if (!budget.allows(size)) {
                budgetStop = true;
                break;
            }
            budget.spend(size);
            frames.add(frame);
            delivered += commit.changes().size();
            deliveredCommits++;
            lastDelivered = commit.commitSeq();
            if (delivered >= limits.limitCommits()) break;
        }
        int returned = commits.stream().mapToInt(c -> c.changes().size()).sum();
        boolean exhausted = !budgetStop && returned <= limits.limitCommits() && deliveredCommits == commits.size();
        long nextCursor = exhausted ? completeCursor(sub, maxSeq) : Math.max(sub.cursor(), lastDelivered);
        frames.add(new SubEnd(nextCursor, null));
        return new Section(frames, nextCursor, true, window.endGate());
    }

    /** Where an unfinished bootstrap resumes: after {@code rowCursor}, or from the start when it is null. */
    private record Resume(String rowCursor) { }

    /**
     * Emits up to maxSnapshotPages pages; returns where to resume, or null when the table is done. A budget stop
     * before the first page of a fresh bootstrap still resumes (from the start), never reads as "done".
     */
    private Resume bootstrapPages(StorageSession session, String logEpoch, CompiledSchema schema, PullLimits limits,
                                  TableSchema table, Map<String, List<String>> effective, long asOf, String rowCursor,
                                  int inlineMaxBytes, Budget budget, List<ResponseFrame> frames) {
        String cursor = rowCursor;
        String digest = syncular.jakarta.wire.CanonicalJson.scopeDigest(effective);
        // §5.3: the image lane only at the start of a table (a resume mid-table stays on the rows lane, same pin)
        if (cursor == null && limits.accepts(PullHeader.ACCEPT_SQLITE) && segments != null) {
            Optional<ResponseFrame> image = segments.image(session, new SegmentRequest(session.partition(), logEpoch,
                    table.name(), schema.version(), digest, asOf, 0, null, null,
                    limits.accepts(PullHeader.ACCEPT_SIGNED_URLS)), table, new ScopeFilter(effective),
                    limits.limitSnapshotRows());
            if (image.isPresent()) {
                if (!budget.allows(REF_FRAME_BYTES)) return new Resume(null);   // stored: the next pull reuses it
                frames.add(image.get());
                budget.spend(REF_FRAME_BYTES);
                return null;   // whole-table: first and last page, paging limits aside (§5.3)
            }
        }
        boolean canInline = limits.accepts(PullHeader.ACCEPT_INLINE_ROWS);
        boolean canExternal = limits.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS) && segments != null;
        LongPredicate sendsInline = bytes -> canInline && (bytes <= inlineMaxBytes || !canExternal);
        for (int page = 0; page < limits.maxSnapshotPages(); page++) {
            // a page this node sent inline from here at this pin, with these limits, goes again as it was
            long capBytes = canExternal ? budget.maxBytes() : budget.inlineRoom();
            PageKey key = new PageKey(session.partition(), logEpoch, table.name(), schema.version(), digest, asOf,
                    cursor, limits.limitSnapshotRows(), capBytes);
            Optional<BuiltPage> kept = canInline
                    ? inlinePages.get(key).filter(k -> sendsInline.test(k.bytes().length)) : Optional.empty();
            Building leading = null;
            if (kept.isEmpty() && canExternal && budget.allows(REF_FRAME_BYTES)) {
                SegmentRequest at = new SegmentRequest(session.partition(), logEpoch, table.name(), schema.version(),
                        digest, asOf, 0, cursor, null, limits.accepts(PullHeader.ACCEPT_SIGNED_URLS));
                Predicate<SegmentRef> fitsHere = ref -> fits(ref, limits.limitSnapshotRows(), budget.maxBytes())
                        && !sendsInline.test(ref.byteLength());
                LongPredicate unchanged = since -> unchangedSince(session.partition(), logEpoch, table.name(),
                        effective, since, asOf);
                Optional<SegmentRef> reused = segments.reuse(at, fitsHere, unchanged);
                if (reused.isEmpty()) {
                    // one build of a page at a time on this node: the requests that come for it meanwhile (a storm
                    // of clients bootstrapping at once, each at its own pin) wait for it and reuse it
                    leading = new Building(key.withoutPin(), new CompletableFuture<>());
                    CompletableFuture<Void> running = building.putIfAbsent(leading.key(), leading.done());
                    if (running != null) {
                        leading = null;
                        session.release();   // no connection held while another request builds the page
                        awaitBuild(running);
                        reused = segments.reuse(at, fitsHere, unchanged);
                    }
                }
                if (reused.isPresent()) {
                    frames.add(reused.get());
                    budget.spend(REF_FRAME_BYTES);
                    cursor = reused.get().nextRowCursor();
                    if (cursor == null) return null;
                    continue;
                }
            }
            BuiltPage built;
            try {
                built = kept.isPresent() ? kept.get() : build(session, schema, table, effective, cursor,
                        limits.limitSnapshotRows(), capBytes);
                boolean inline = sendsInline.test(built.bytes().length);
                if (!budget.allows(inline ? built.bytes().length + INLINE_FRAME_OVERHEAD : REF_FRAME_BYTES)) {
                    return new Resume(cursor); // the token carries the rest
                }
                if (inline) {
                    frames.add(new SegmentInline(built.bytes()));
                    budget.spend(built.bytes().length + INLINE_FRAME_OVERHEAD);
                    if (kept.isEmpty()) inlinePages.remember(key, built);
                } else {
                    ResponseFrame ref = segments.publish(new SegmentRequest(session.partition(), logEpoch,
                            table.name(), schema.version(), digest, asOf, built.rows(), cursor, built.nextRowCursor(),
                            limits.accepts(PullHeader.ACCEPT_SIGNED_URLS)), built.bytes());
                    frames.add(ref);
                    budget.spend(REF_FRAME_BYTES);
                }
            } finally {
                if (leading != null) {
                    building.remove(leading.key(), leading.done());
                    leading.done().complete(null);
                }
            }
            if (built.nextRowCursor() == null) return null;
            cursor = built.nextRowCursor();
        }
        return new Resume(cursor);
    }

    /** A page this node is building for delivery by reference: its key without a pin, done once published. */
    private record Building(PageKey key, CompletableFuture<Void> done) { }

    /**
     * Waits for another request's build of a page, at most {@link #BUILD_WAIT_MS}: a build that fails or takes
     * longer leaves the waiting request to build the page itself.
     */
    private static void awaitBuild(CompletableFuture<Void> running) {
        try {
            running.get(BUILD_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // built here then
        }
    }

    /**
     * Whether a page built for a bootstrap pinned at {@code since} serves one pinned at {@code asOf} (issue 15): the
     * recent tail shows that no change of the table matching the scopes was committed in between, so a client
     * bootstrapped at {@code since} would pull an empty window through {@code asOf}, and its replica is the one a
     * bootstrap at {@code asOf} gives. A page holds rows at the pin or newer in any case (see {@link #fits}), so
     * the writes that move a partition's head elsewhere (other scopes, other tables) no longer make every client's
     * bootstrap read and encode its pages again. A row that a change moved out of the scopes is not in the window
     * either, as for every client at {@code since}.
     */
    private boolean unchangedSince(String partition, String logEpoch, String table,
                                   Map<String, List<String>> effective, long since, long asOf) {
        return recent.unchanged(partition, logEpoch, table, new ScopeFilter(effective), since, asOf, TAIL_WAIT_MS);
    }

    /**
     * Whether a published page could be the page this request builds by reference: no more rows than it asks for,
     * and either exactly that many or the rest of the table, within the byte cap of a page sent by reference (the
     * caller also checks that it would not go inline). Rows in it may be at versions newer than the pin, as in any
     * page (below).
     */
    private static boolean fits(SegmentRef ref, int limitRows, long maxBytes) {
        return ref.rowCount() <= limitRows && (ref.rowCount() == limitRows || ref.nextRowCursor() == null)
                && ref.byteLength() <= maxBytes;
    }

    /** Reads the page of at most {@code limitRows} rows after {@code cursor} and encodes it within {@code capBytes}. */
    private static BuiltPage build(StorageSession session, CompiledSchema schema, TableSchema table,
                                   Map<String, List<String>> effective, String cursor, int limitRows, long capBytes) {
        List<StoredRow> scanned = session.scanRows(new RowScanQuery(table.name(), new ScopeFilter(effective), cursor,
                limitRows + 1));
        List<StoredRow> rows = scanned.size() > limitRows ? scanned.subList(0, limitRows) : scanned;
        Page p = page(schema, table, rows, capBytes);
        boolean hasMore = p.rows() < scanned.size();
        return new BuiltPage(p.rows(), p.bytes(), hasMore ? rows.get(p.rows() - 1).rowId() : null);
    }

    /**
     * Where a page was built: its context (partition, log epoch, table, schema version, scopes, pin), where it starts,
     * and the limits it was cut to. The same key builds the same page while nothing is committed (the pin moves with
     * every commit, the log epoch with a restore, the schema version with an activation); a page kept from an
     * earlier request may hold rows at versions older than a fresh read's, which are still at or after the pin, as
     * any page of a bootstrap that spans requests does.
     */
    private record PageKey(String partition, String logEpoch, String table, int schemaVersion, String scopeDigest,
                           long asOfCommitSeq, String rowCursor, int limitRows, long capBytes) {
        /** This page wherever it is pinned: what a build in progress is known by ({@link Building}). */
        PageKey withoutPin() {
            return new PageKey(partition, logEpoch, table, schemaVersion, scopeDigest, -1, rowCursor, limitRows,
                    capBytes);
        }
    }

    /** A page's rows and encoding, and where the next one starts (null: it ended the table). */
    private record BuiltPage(int rows, byte[] bytes, String nextRowCursor) { }

    /** One page's segment: its first {@code rows} rows of the scan, encoded. */
    private record Page(int rows, byte[] bytes) { }

    /**
     * The longest prefix of {@code rows} whose segment stays within {@code maxBytes} (at least one row, and all of an
     * empty scan). The prefix is sized from the stored payloads, which the segment carries unchanged after a version
     * each, then checked against the encoding itself.
     */
    static Page page(CompiledSchema schema, TableSchema table, List<StoredRow> rows, long maxBytes) {
        long estimate = 64 + table.name().length();
        for (var c : table.columns()) estimate += c.name().length() + 8;
        int take = 0;
        while (take < rows.size()) {
            long next = estimate + 16 + rows.get(take).payload().length;
            if (take > 0 && next > maxBytes) break;
            estimate = next;
            take++;
        }
        byte[] bytes = encodeSegment(schema, table, rows.subList(0, take));
        while (bytes.length > maxBytes && take > 1) {
            take = (int) Math.max(1, Math.min(take - 1, take * maxBytes / bytes.length));
            bytes = encodeSegment(schema, table, rows.subList(0, take));
        }
        return new Page(take, bytes);
    }

    /**
     * An SSG2 rows segment of one page. Rows are bounded by the stored snapshot, not the pin: a row changed after
     * {@code asOf} is served at its newer version and the client's incremental pull from {@code asOf} replays the
     * change idempotently (REF).
     */
    static byte[] encodeSegment(CompiledSchema schema, TableSchema table, List<StoredRow> rows) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + rows.size() * 64);
        RowsSegmentWriter w = new RowsSegmentWriter(out, table.name(), schema.version(), table.descriptors());
        for (StoredRow r : rows) w.writeRow(r.serverVersion(), RowCodec.decodeLossless(table.descriptors(), r.payload()));
        w.finish();
        return out.toByteArray();
    }

    /** COMMIT frames are self-contained: only the subscription's table, at dictionary index 0 (REF). */
    static CommitFrame commitFrame(String table, StoredCommit commit) {
        List<CommitFrame.Change> changes = new ArrayList<>(commit.changes().size());
        for (StoredChange c : commit.changes()) {
            changes.add(c.op() == ChangeOp.UPSERT
                    ? CommitFrame.Change.upsert(0, c.rowId(), c.rowVersion(), c.scopes(), c.payload())
                    : CommitFrame.Change.delete(0, c.rowId(), c.scopes()));
        }
        return new CommitFrame(commit.commitSeq(), commit.createdAtMs(), commit.actorId(), List.of(table), changes);
    }

    /** A frame's encoded size, closely enough for the byte budget. */
    private static long estimate(CommitFrame frame) {
        long n = 64 + frame.actorId().length() + frame.tables().get(0).length();
        for (CommitFrame.Change c : frame.changes()) {
            n += 32 + c.rowId().length() + (c.row() == null ? 0 : c.row().length);
            for (Map.Entry<String, String> s : c.scopes().entrySet()) n += 8 + s.getKey().length() + s.getValue().length();
        }
        return n;
    }
}

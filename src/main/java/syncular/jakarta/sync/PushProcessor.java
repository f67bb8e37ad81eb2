package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ValidatedOperation;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.LockedAppend;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.PushPreamble;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.UnitTransactions;
import syncular.jakarta.wire.ColumnBitmap;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.RejectionDetails;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.TypeTag;
import syncular.jakarta.wire.WireVersion;

/**
 * Applies PUSH_COMMITs (SPEC §6, ARCHITECTURE request step 4) by group commit: the commits of every request of a
 * partition that arrive while a group is being applied form the next group, which one leader applies in ONE
 * transaction under one lock acquisition: the lock with the serve-gate token, the idempotency re-check of every
 * commit and the rows they target in one round trip; per commit a savepoint, its operations' authorization,
 * conflicts, row validators (§6.7) and writes, the commit validator (§6.8), and the append with the writer version
 * and the push result in one round trip. A rejected operation is a value: only its commit's savepoint is rolled
 * back, the rejection is stored and the group goes on. An infrastructure failure of the group retries each request's
 * commits alone, one transaction each. Results are answered only after COMMIT.
 *
 * <p>The wire version is a parameter of the pipeline, never a constant: wire 3 changes this path (WIRE3-DELTA).
 */
public final class PushProcessor {
    /** Commits one group applies at most (the group takes whole requests; a larger request goes alone). */
    static final int MAX_GROUP_COMMITS = 64;

    /** Where each push group gets its transaction of its own (in the container: {@code web.PushGroups}). */
    private final UnitTransactions units;
    private final Clock clock;
    private final Validation validation;
    private final int maxCascadeOperations;
    /** §5.9: the store the push-time existence check asks; null when the server has none. */
    private final BlobStore blobs;
    private final GroupCommit<Batch, Pushed> groups =
            new GroupCommit<>(MAX_GROUP_COMMITS, b -> b.commits().size(), this::applyGroup);

    /** @param maxCascadeOperations §6.11: operations declared references may append to one commit */
    public PushProcessor(ServerStorage storage, Clock clock, Validation validation, int maxCascadeOperations) {
        this(storage, clock, validation, maxCascadeOperations, null);
    }

    /** @param blobs the blob store of §5.9.6's existence check; null: none, and every blob reference is refused */
    public PushProcessor(ServerStorage storage, Clock clock, Validation validation, int maxCascadeOperations,
                         BlobStore blobs) {
        this(UnitTransactions.of(storage), clock, validation, maxCascadeOperations, blobs);
    }

    /** @param units where each push group gets its transaction */
    public PushProcessor(UnitTransactions units, Clock clock, Validation validation, int maxCascadeOperations,
                         BlobStore blobs) {
        this.units = units;
        this.clock = clock;
        this.validation = validation;
        this.maxCascadeOperations = maxCascadeOperations;
        this.blobs = blobs;
    }

    /** What one commit produced on the wire: PUSH_RESULT and, for a rejection with details, PUSH_RESULT_DETAILS. */
    public record Outcome(PushResult result, Optional<PushResultDetails> details, long appliedCommitSeq) {
        public List<ResponseFrame> frames() {
            List<ResponseFrame> f = new ArrayList<>(2);
            f.add(result);
            details.ifPresent(f::add);
            return f;
        }
    }

    /**
     * One request's commits for the push phase, and how its serve-gate re-check goes under the lock.
     * {@code presentBlobs}: which blobs its payloads name are present ({@link BlobExistence#lookUp}); null until the
     * processor has looked (a caller never needs to).
     */
    public record Batch(RequestScope request, CompiledSchema schema, Map<String, List<String>> allowed,
                        List<PushCommit> commits, TransactionGate gate, Set<String> presentBlobs) {
        public Batch {
            commits = List.copyOf(commits);
        }

        public Batch(RequestScope request, CompiledSchema schema, Map<String, List<String>> allowed,
                     List<PushCommit> commits, TransactionGate gate) {
            this(request, schema, allowed, commits, gate, null);
        }

        /** This batch after the §5.9.6 look-up, outside any transaction (a no-op without blob_ref columns). */
        Batch withBlobsLookedUp(BlobStore store, long nowMs) {
            if (presentBlobs != null) return this;
            Set<String> present = BlobExistence.any(schema) ? BlobExistence.lookUp(store,
                    request.identity().partition(), schema, WriteSemantics.of(request.wireVersion()), commits, nowMs)
                    : Set.of();
            return new Batch(request, schema, allowed, commits, gate, present);
        }
    }

    /**
     * What the push phase produced for one request: an outcome per commit in order, up to a {@code failure} (null
     * when none) that ended the request's push phase after them; the partition's commit-log head and horizon
     * under the lock, which a pull of the same request reads through; and when its transaction took the partition
     * lock, by {@link System#nanoTime()} (0 when unknown; a backfill's pacer bounds its hold from there).
     */
    public record Pushed(List<Outcome> outcomes, RuntimeException failure, long maxCommitSeq, long horizonSeq,
                         long lockedAtNanos) {
        public Pushed {
            outcomes = List.copyOf(outcomes);
        }

        /** Without the lock's time (a push that did not get it, or whose caller does not ask). */
        Pushed(List<Outcome> outcomes, RuntimeException failure, long maxCommitSeq, long horizonSeq) {
            this(outcomes, failure, maxCommitSeq, horizonSeq, 0);
        }
    }

    /**
     * Pushes a request's commits through its partition's group commit ({@link GroupCommit}): applied with the
     * commits of every request of the partition that queued meanwhile, in one transaction under one lock
     * acquisition, and answered only after that transaction committed.
     */
    public Pushed push(Batch batch) {
        // §5.9.6's look-up happens here, on the request's thread: never under the lock, never holding a connection
        return groups.submit(batch.request().identity().partition(), batch.withBlobsLookedUp(blobs, clock.nowMs()));
    }

    /**
     * Pushes {@code batch} on {@code tx}, a transaction the caller owns and finishes (a backfill batch, whose
     * projection commit and checkpoint advance must commit together): no group, no transaction of its own.
     */
    public Pushed pushOn(StorageTransaction tx, Batch batch) {
        return applyAll(tx, List.of(batch.withBlobsLookedUp(blobs, clock.nowMs()))).get(0);
    }

    /**
     * Pushes {@code batch}, one commit, on {@code tx} as {@link #pushOn} does, but with its row writes made BEFORE
     * the partition lock (issue 21: a backfill batch, whose projection rows nothing else writes before activation):
     * the rows are read and locked ({@link StorageTransaction#lockRowsForPush}), the operations decided against
     * them and written ({@link StorageTransaction#writeRowsIfUnchanged}), and only then the lock, the gate and the
     * append, so the partition's other pushes wait for the append alone, not for the row writes. Where that does not
     * apply it is {@link #pushOn}: validators or declared references read the candidate state, a row is written
     * twice, or the commit is stored already. Whatever it wrote must not commit unless the commit is applied, so a
     * gate refusal or an append refused after the row writes throws; so does {@link RowsChanged}, and the yield
     * timeout's {@link StorageErrorCode#LOCK_NOT_AVAILABLE}: the caller rolls back and tries again later.
     */
    public Pushed pushRowsFirst(StorageTransaction tx, Batch batch) {
        if (batch.commits().size() != 1) throw new IllegalArgumentException("rows first pushes one commit");
        Batch b = batch.withBlobsLookedUp(blobs, clock.nowMs());
        PushCommit commit = b.commits().get(0);
        if (validation.begin() != null || DeclaredReferences.involved(b.schema(), commit)) {
            return applyAll(tx, List.of(b)).get(0);
        }
        PushKey key = new PushKey(b.request().clientId(), commit.clientCommitId());
        Set<RowKey> targets = new LinkedHashSet<>();
        for (PushCommit.Operation op : commit.operations()) {
            if (b.schema().table(op.table()).isPresent() && StorableInput.rowId(0, op.rowId()) == null) {
                targets.add(new RowKey(op.table(), op.rowId()));
            }
        }
        boolean sparse = WireVersion.hasSparsePayloads(b.request().wireVersion());
        PushPreamble read = tx.lockRowsForPush(List.of(key), targets, sparse);
        if (!read.existing().isEmpty() || !read.unreadable().isEmpty()) return applyAll(tx, List.of(b)).get(0);
        Rows rows = new Rows(tx, read, targets, sparse);
        Candidate candidate = stage(tx, b, commit, rows);
        if (candidate.terminated() != null) {   // rejected before any write: stored as a push stores it, under the lock
            PushPreamble locked = tx.lockForPush(b.schema().version(), List.of(key), List.of(), false);
            long lockedAt = System.nanoTime();
            b.gate().check(locked.gate());
            Decided d = finish(tx, b.request().clientId(), commit, rows, candidate);
            return new Pushed(List.of(d.outcome()), null, locked.maxCommitSeq(), locked.horizonSeq(), lockedAt);
        }
        Set<RowKey> distinct = new java.util.HashSet<>();
        for (RowWrite w : candidate.writes()) {
            distinct.add(new RowKey(w.table(), w instanceof RowWrite.Upsert u ? u.row().rowId()
                    : ((RowWrite.Delete) w).rowId()));
        }
        if (distinct.size() < candidate.writes().size()) return applyAll(tx, List.of(b)).get(0);
        if (!tx.writeRowsIfUnchanged(candidate.writes())) {
            throw new RowsChanged(commit.clientCommitId(), "a row changed between its read and its write");
        }
        LockedAppend appended;
        try {
            appended = tx.lockAndAppend(b.schema().version(), key, candidate.append(), candidate.applied());
        } catch (StorageException e) {
            if (e.code() == StorageErrorCode.WRITER_FENCE_REJECTED) throw behindTheFence();
            throw e;
        }
        long lockedAt = System.nanoTime() - appended.heldNanos();
        b.gate().check(appended.gate());   // a refusal throws: nothing of the transaction may commit
        if (appended.stored()) throw new RowsChanged(commit.clientCommitId(), "another transaction stored it");
        StoredPushResult applied = candidate.applied();
        StoredPushResult stored = new StoredPushResult(StoredPushResult.Status.APPLIED, appended.commitSeq(),
                applied.recordedAtMs(), applied.cacheIdentity(), applied.results());
        return new Pushed(List.of(outcome(commit.clientCommitId(), stored, false)), null, appended.commitSeq(),
                appended.horizonSeq(), lockedAt);
    }

    /** This process runs an older schema than the partition's fence: it is behind, not broken. */
    private static SyncException behindTheFence() {
        return new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the partition is fenced for a newer schema version; this server is behind", "{}");
    }

    /**
     * A rows-first push found a row other than its read left it (a push inserted it meanwhile), or its commit stored
     * by another transaction: nothing it wrote may commit; its transaction rolls back and is tried again.
     */
    public static final class RowsChanged extends RuntimeException {
        RowsChanged(String clientCommitId, String what) {
            super("rows-first commit " + clientCommitId + ": " + what);
        }
    }

    /**
     * The leader's work for one group: one transaction; if it fails for any reason but the lock timeout, each
     * request's commits again, each commit in a transaction of its own, so one request's failure is only its own.
     */
    private List<Pushed> applyGroup(String partition, List<Batch> group) {
        try {
            return inTransaction(partition, group);
        } catch (RuntimeException e) {
            if (isLockTimeout(e) || (group.size() == 1 && group.get(0).commits().size() == 1)) {
                RuntimeException failure = isLockTimeout(e) ? rateLimited() : e;
                return group.stream().map(b -> new Pushed(List.of(), failure, 0, 0)).toList();
            }
            List<Pushed> out = new ArrayList<>();
            for (Batch b : group) out.add(alone(partition, b));
            return out;
        }
    }

    /** A request's commits one transaction each, up to the first failure (the push path before group commit). */
    private Pushed alone(String partition, Batch b) {
        List<Outcome> outcomes = new ArrayList<>();
        long max = 0;
        long horizon = 0;
        for (PushCommit commit : b.commits()) {
            Batch one = new Batch(b.request(), b.schema(), b.allowed(), List.of(commit), b.gate(), b.presentBlobs());
            try {
                Pushed p = inTransaction(partition, List.of(one)).get(0);
                if (p.failure() != null) return new Pushed(outcomes, p.failure(), max, horizon);
                outcomes.addAll(p.outcomes());
                max = p.maxCommitSeq();
                horizon = p.horizonSeq();
            } catch (RuntimeException e) {
                return new Pushed(outcomes, isLockTimeout(e) ? rateLimited() : e, max, horizon);
            }
        }
        return new Pushed(outcomes, null, max, horizon);
    }

    /** Fresh transactions tried after one whose connection was lost (the pool validates only once per interval). */
    static final int CONNECTION_RETRIES = 3;

    /**
     * {@code group} in a transaction of its own. A transaction whose connection was lost is tried again on a fresh
     * one: it rolled back, or (a COMMIT lost in flight) it committed, and then the retry's idempotency re-check
     * under the lock answers its commits from their stored results. Nothing is applied twice.
     */
    private List<Pushed> inTransaction(String partition, List<Batch> group) {
        for (int attempt = 0; ; attempt++) {
            try {
                return units.pushGroup(partition, tx -> applyAll(tx, group));
            } catch (StorageException e) {
                if (e.code() != StorageErrorCode.CONNECTION_LOST || attempt >= CONNECTION_RETRIES) throw e;
            }
        }
    }

    private static boolean isLockTimeout(RuntimeException e) {
        return e instanceof StorageException s && s.code() == StorageErrorCode.LOCK_NOT_AVAILABLE;
    }

    /**
     * The partition lock, bounded by the storage's lock timeout (issue 13): a push that cannot get it in time is
     * answered {@code sync.rate_limited} (retryable; its transaction rolls back, nothing is stored) instead of holding
     * a pooled connection for as long as somebody else holds the lock.
     */
    private static SyncException rateLimited() {
        return new SyncException(ErrorCode.SYNC_RATE_LIMITED,
                "the partition lock was not available within the lock timeout; retry later");
    }

    /**
     * Every commit of {@code group} on {@code tx}: the lock with the gate, the idempotency re-check of all commits and
     * every row they target in one round trip; then per request its gate re-check, per commit its savepoint, its
     * operations against the rows as the earlier commits of the group left them, and its writes, append and result in
     * one round trip. A commit seen twice in the group (a retry racing its original) is answered from the first.
     */
    private List<Pushed> applyAll(StorageTransaction tx, List<Batch> group) {
        List<PushKey> keys = new ArrayList<>();
        Set<RowKey> prefetch = new LinkedHashSet<>();
        for (Batch b : group) {
            for (PushCommit commit : b.commits()) {
                keys.add(new PushKey(b.request().clientId(), commit.clientCommitId()));
                for (PushCommit.Operation op : commit.operations()) {
                    if (b.schema().table(op.table()).isPresent() && StorableInput.rowId(0, op.rowId()) == null) {
                        prefetch.add(new RowKey(op.table(), op.rowId()));
                    }
                }
            }
        }
        int running = group.get(0).schema().version();
        boolean sparse = group.stream().anyMatch(b -> WireVersion.hasSparsePayloads(b.request().wireVersion()));
        PushPreamble pre = tx.lockForPush(running, keys, prefetch, sparse);
        long lockedAt = System.nanoTime();
        Rows rows = new Rows(tx, pre, prefetch, sparse);
        Map<PushKey, StoredPushResult> decided = new HashMap<>(pre.existing());
        long head = pre.maxCommitSeq();
        boolean first = true;
        List<List<Outcome>> outcomes = new ArrayList<>();
        List<RuntimeException> failures = new ArrayList<>();
        for (Batch b : group) {
            List<Outcome> mine = new ArrayList<>();
            outcomes.add(mine);
            try {
                b.gate().check(pre.gate());
            } catch (SyncException refused) {
                failures.add(refused);
                continue;
            }
            failures.add(null);
            for (PushCommit commit : b.commits()) {
                PushKey key = new PushKey(b.request().clientId(), commit.clientCommitId());
                if (pre.unreadable().contains(key)) {
                    mine.add(cacheMiss(commit.clientCommitId()));
                    continue;
                }
                StoredPushResult known = decided.get(key);
                if (known != null) {
                    mine.add(outcome(commit.clientCommitId(), recordedConflicts(known, commit, b.schema()), true));
                    continue;
                }
                if (!first) tx.nextCandidate();
                first = false;
                Decided d = applyCommit(tx, b, commit, rows);
                decided.put(key, d.stored());
                mine.add(d.outcome());
                if (d.outcome().appliedCommitSeq() > 0) head = d.outcome().appliedCommitSeq();
            }
        }
        List<Pushed> out = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            out.add(new Pushed(outcomes.get(i), failures.get(i), head, pre.horizonSeq(), lockedAt));
        }
        return out;
    }

    /**
     * The rows a group's operations target, and whether the absent ones have a tombstone: as read under the lock,
     * then as the group's applied commits left them (a delete leaves a tombstone, an insert clears it, as the
     * append records them). A commit's own writes stay in its layer until it is applied; a rejection drops them.
     */
    private static final class Rows {
        private final StorageTransaction tx;
        private final Map<RowKey, Optional<StoredRow>> group = new HashMap<>();
        private final Map<RowKey, Optional<StoredRow>> commit = new HashMap<>();
        private final Map<RowKey, Boolean> groupTombstones = new HashMap<>();
        private final Map<RowKey, Boolean> commitTombstones = new HashMap<>();

        /** {@code tombstonesRead}: whether the preamble said which prefetched rows have one (else asked lazily). */
        Rows(StorageTransaction tx, PushPreamble pre, Set<RowKey> prefetched, boolean tombstonesRead) {
            this.tx = tx;
            for (RowKey k : prefetched) {
                group.put(k, Optional.ofNullable(pre.rows().get(k)));
                if (tombstonesRead) groupTombstones.put(k, pre.tombstones().contains(k));
            }
        }

        Optional<StoredRow> get(String table, String rowId) {
            RowKey k = new RowKey(table, rowId);
            Optional<StoredRow> r = commit.get(k);
            if (r == null) r = group.get(k);
            if (r == null) {
                r = tx.getRow(table, rowId);
                group.put(k, r);
            }
            return r;
        }

        boolean tombstoned(String table, String rowId) {
            RowKey k = new RowKey(table, rowId);
            Boolean t = commitTombstones.get(k);
            if (t == null) t = groupTombstones.get(k);
            if (t == null) {
                t = tx.hasTombstone(table, rowId);
                groupTombstones.put(k, t);
            }
            return t;
        }

        void put(String table, String rowId, StoredRow row) {
            RowKey k = new RowKey(table, rowId);
            commit.put(k, Optional.ofNullable(row));
            if (row == null) {
                commitTombstones.put(k, true);
            } else if (row.serverVersion() == 1) {
                commitTombstones.put(k, false);
            }
        }

        void applied() {
            group.putAll(commit);
            commit.clear();
            groupTombstones.putAll(commitTombstones);
            commitTombstones.clear();
        }

        void rejected() {
            commit.clear();
            commitTombstones.clear();
        }
    }

    private record Decided(StoredPushResult stored, Outcome outcome) { }

    /**
     * One commit under the group's lock: its operations (rows from {@code rows}; writes collected and sent with the
     * append, or written at once when validators read the candidate state), then the commit validator, then the
     * append with the applied result; or the rejection.
     */
    private Decided applyCommit(StorageTransaction tx, Batch b, PushCommit commit, Rows rows) {
        return finish(tx, b.request().clientId(), commit, rows, stage(tx, b, commit, rows));
    }

    /**
     * A commit's operations decided against {@code rows}: its row writes ({@code null}: made at once, validators or
     * declared references read the candidate state), its append and applied result, or the rejection that ended it.
     */
    private record Candidate(List<RowWrite> writes, NewCommit append, StoredPushResult applied,
                             OperationResult terminated, long createdAtMs) { }

    /** The operations, declared references and commit validator of {@link #applyCommit}, up to the append. */
    private Candidate stage(StorageTransaction tx, Batch b, PushCommit commit, Rows rows) {
        Identity id = b.request().identity();
        String clientId = b.request().clientId();
        WriteSemantics semantics = WriteSemantics.of(b.request().wireVersion());
        long createdAtMs = clock.nowMs();
        List<OperationResult> results = new ArrayList<>();
        List<StoredChange> changes = new ArrayList<>();
        OperationResult terminated = null;
        Validation.Run begun = validation.begin();
        // validators that handle none of the commit's tables (and no commit validator) cost it nothing: its writes
        // go with the append instead of one round trip each
        Validation.Run run = begun != null && (begun.collectsEvidence()
                || commit.operations().stream().anyMatch(op -> begun.wants(op.table()))) ? begun : null;
        Hooks hooks = run == null ? null : new Hooks(run, new ValidationReads(tx, b.schema(), id.actorId()));
        // writes go with the append, unless validators or declared references read the candidate state
        boolean referenced = DeclaredReferences.involved(b.schema(), commit);
        List<RowWrite> writes = hooks == null && !referenced ? new ArrayList<>() : null;
        List<DeclaredReferences.Staged> staged = new ArrayList<>();
        List<Integer> origins = new ArrayList<>();
        int clientOperations = commit.operations().size();
        try {
            for (int i = 0; i < clientOperations; i++) {
                Applied applied = applyOperation(tx, rows, writes, b.schema(), b.allowed(),
                        commit.operations().get(i), i, hooks, semantics, b.presentBlobs());
                if (applied.rejection != null) {
                    terminated = applied.rejection;
                    break;
                }
                results.add(new OperationResult.Applied(i));
                if (applied.change != null) changes.add(applied.change);
                staged.add(applied.staged);
            }
            if (terminated == null && referenced) {
                terminated = DeclaredReferences.enforce(b.schema(), tx, rows::get, staged, clientOperations,
                        maxCascadeOperations, new Cascade(tx, rows, hooks, changes, origins, clientOperations));
            }
            if (terminated == null && hooks != null && run.collectsEvidence()) {
                // §6.8: once, after the final staged operation and before the append; an appended operation's
                // rejection is its client operation's
                terminated = blamedOnClientOperation(run.validateCommit(new CommitValidator.Commit(clientId,
                        commit.clientCommitId(), id.actorId(), id.partition(), hooks.evidence), hooks.reads)
                        .orElse(null), clientOperations, origins);
            }
        } catch (StorageException e) {
            terminated = refusal(e, results.size(), commit);
        }
        if (terminated != null) return new Candidate(writes, null, null, terminated, createdAtMs);
        // the seq is a placeholder: the append writes the allocated one into the stored result
        StoredPushResult applied = new StoredPushResult(StoredPushResult.Status.APPLIED, 0L, createdAtMs,
                UUID.randomUUID().toString(), results);
        NewCommit append = new NewCommit(clientId, commit.clientCommitId(), id.actorId(), createdAtMs, changes);
        return new Candidate(writes, append, applied, null, createdAtMs);
    }

    /** The append of a {@link #stage staged} commit with its row writes, or its rejection, stored. */
    private static Decided finish(StorageTransaction tx, String clientId, PushCommit commit, Rows rows,
                                  Candidate candidate) {
        OperationResult terminated = candidate.terminated();
        if (terminated == null) {
            StoredPushResult applied = candidate.applied();
            NewCommit append = candidate.append();
            try {
                long seq = candidate.writes() == null ? tx.appendCommit(append, applied)
                        : tx.applyCommit(candidate.writes(), append, applied);
                StoredPushResult stored = new StoredPushResult(StoredPushResult.Status.APPLIED, seq,
                        applied.recordedAtMs(), applied.cacheIdentity(), applied.results());
                rows.applied();
                return new Decided(stored, outcome(commit.clientCommitId(), stored, false));
            } catch (StorageException e) {
                if (e.code() == StorageErrorCode.WRITER_FENCE_REJECTED) throw behindTheFence();
                terminated = refusal(e, e.opIndex().orElse(0), commit);
            }
        }
        rows.rejected();
        StoredPushResult rejected = new StoredPushResult(StoredPushResult.Status.REJECTED, null,
                candidate.createdAtMs(), UUID.randomUUID().toString(), List.of(terminated));
        tx.rejectPush(clientId, commit.clientCommitId(), rejected);
        return new Decided(rejected, outcome(commit.clientCommitId(), rejected, false));
    }

    /**
     * The operations declared references append (§6.11): each goes through the row validators of its table (a
     * rejection is blamed on the client operation it comes from), is written at once (the references pass reads
     * the candidate state) and adds its change and its §6.8 evidence.
     */
    private static final class Cascade implements DeclaredReferences.Appender {
        private final StorageTransaction tx;
        private final Rows rows;
        private final Hooks hooks;
        private final List<StoredChange> changes;
        private final List<Integer> origins;
        private final int clientOperations;

        Cascade(StorageTransaction tx, Rows rows, Hooks hooks, List<StoredChange> changes, List<Integer> origins,
                int clientOperations) {
            this.tx = tx;
            this.rows = rows;
            this.hooks = hooks;
            this.changes = changes;
            this.origins = origins;
            this.clientOperations = clientOperations;
        }

        @Override
        public OperationResult delete(TableSchema child, StoredRow row, int opIndex, int origin) {
            origins.add(origin);
            OperationResult rejected = validate(child, new ValidatedOperation(opIndex, true, child.name(),
                    row.rowId(), null, storedValues(child, row), row.serverVersion(), null));
            if (rejected != null) return rejected;
            write(tx, rows, null, new RowWrite.Delete(child.name(), row.rowId(), origin));
            changes.add(StoredChange.delete(child.name(), row.rowId(), row.scopes()));
            return null;
        }

        @Override
        public OperationResult detach(TableSchema child, StoredRow row, int column, int opIndex, int origin) {
            origins.add(origin);
            Object[] before = RowCodec.decode(child.descriptors(), row.payload());
            Object[] after = before.clone();
            after[column] = null;
            long version = row.serverVersion() + 1;
            boolean[] written = new boolean[after.length];
            written[column] = true;
            StoredRow detached = new StoredRow(row.rowId(), version, row.scopes(),
                    RowCodec.encode(child.descriptors(), after),
                    row.columnVersions().written(after.length, row.serverVersion(), written, version));
            OperationResult rejected = validate(child, new ValidatedOperation(opIndex, false, child.name(),
                    row.rowId(), ValidationReads.values(child, after), ValidationReads.values(child, before),
                    row.serverVersion(), version));
            if (rejected != null) return rejected;
            write(tx, rows, null, new RowWrite.Upsert(child.name(), detached, origin));
            changes.add(StoredChange.upsert(child.name(), row.rowId(), version, row.scopes(), detached.payload()));
            return null;
        }

        private OperationResult validate(TableSchema child, ValidatedOperation op) {
            if (hooks == null || !hooks.run.wants(child.name())) return null;
            return blamedOnClientOperation(hooks.validate(op, true), clientOperations, origins);
        }
    }

    /** A rejection naming an appended operation (§6.11), renamed to the client operation it comes from. */
    private static OperationResult blamedOnClientOperation(OperationResult rejection, int clientOperations,
                                                           List<Integer> origins) {
        if (rejection == null || rejection.opIndex() < clientOperations) return rejection;
        int origin = origins.get(rejection.opIndex() - clientOperations);
        if (rejection instanceof OperationResult.Failed f) {
            return new OperationResult.Failed(origin, f.code(), f.message(), f.retryable(), f.detailsJson());
        }
        return rejection;
    }

    /**
     * A storage refusal that belongs to the written values: a relational constraint, or a value the database refuses
     * (class 22/54), which fails the same way on every retry: a stored rejection, never a 500 that wedges the
     * client's outbox. Without an index from the write, it is the operation in progress. Anything else is rethrown.
     */
    private static OperationResult refusal(StorageException e, int inProgress, PushCommit commit) {
        if (e.code() == StorageErrorCode.CONSTRAINT_VIOLATION) {
            return new OperationResult.Failed(e.opIndex().orElse(0), ErrorCode.SYNC_CONSTRAINT_VIOLATION.wire(),
                    "write violates a relational constraint", false, null);
        }
        if (e.code() == StorageErrorCode.DATA_REJECTED) {
            return StorableInput.refused(e.opIndex().orElse(Math.min(inProgress, commit.operations().size() - 1)));
        }
        throw e;
    }

    /** The serve-gate re-check against the token read under the push lock (RFC 0007 gate point 4). */
    @FunctionalInterface
    public interface TransactionGate {
        void check(ServeGate underLock);
    }

    /** Per-request facts the push needs: who, and which client. */
    public record RequestScope(Identity identity, String clientId, int wireVersion) { }

    /** One commit's validators, their transaction-bound reads and the §6.8 operation evidence gathered so far. */
    private static final class Hooks {
        final Validation.Run run;
        final ValidationReads reads;
        final List<ValidatedOperation> evidence = new ArrayList<>();

        Hooks(Validation.Run run, ValidationReads reads) {
            this.run = run;
            this.reads = reads;
        }

        /**
         * Records the evidence and runs the §6.7 validators (none for the idempotent delete of an absent row);
         * a rejection, or null to go on with the write.
         */
        OperationResult validate(ValidatedOperation op, boolean runRowValidators) {
            if (run.collectsEvidence()) evidence.add(op);
            if (!runRowValidators) return null;
            return run.validateRow(op, reads).orElse(null);
        }
    }

    /** An operation's change (null when it changes nothing) and how it was staged; or its rejection. */
    private record Applied(StoredChange change, DeclaredReferences.Staged staged, OperationResult rejection) {
        static Applied ok(StoredChange change, DeclaredReferences.Staged staged) {
            return new Applied(change, staged, null);
        }

        static Applied rejected(OperationResult rejection) { return new Applied(null, null, rejection); }

        static Applied reject(int opIndex, ErrorCode code, String message) {
            return rejected(new OperationResult.Failed(opIndex, code.wire(), message, code.retryable(), null));
        }
    }

    /**
     * REF push pipeline (SPEC-DIGEST §8.2): table → resolver → the row → delete, or the upsert as the request's
     * {@link WriteSemantics} decide it → CRDT and blob checks → validator (§6.7) → write. {@code hooks} is null when
     * no validator is active.
     */
    private Applied applyOperation(StorageTransaction tx, Rows rows, List<RowWrite> writes,
                                   CompiledSchema schema, Map<String, List<String>> allowed,
                                   PushCommit.Operation op, int i, Hooks hooks, WriteSemantics semantics,
                                   Set<String> presentBlobs) {
        Optional<TableSchema> maybeTable = schema.table(op.table());
        if (maybeTable.isEmpty()) {
            return Applied.reject(i, ErrorCode.SYNC_UNKNOWN_TABLE, "the table is not handled by this server");
        }
        TableSchema table = maybeTable.get();
        if (allowed == null) return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "scope resolution failed (§3.4)");
        // before the first read: a rowId the database cannot hold is refused even as a query parameter
        OperationResult unstorable = StorableInput.rowId(i, op.rowId());
        if (unstorable != null) return Applied.rejected(unstorable);
        Optional<StoredRow> stored = rows.get(table.name(), op.rowId());

        boolean validating = hooks != null && hooks.run.wants(table.name());
        if (op.op() == Op.DELETE) {
            if (stored.isEmpty()) {
                // §6.2: absent-row delete applies, changes nothing; §6.7 runs no validator, §6.8 still sees it
                if (validating) hooks.validate(new ValidatedOperation(i, true, table.name(), op.rowId(), null, null,
                        null, null), false);
                return Applied.ok(null, new DeclaredReferences.Staged(table, op.rowId(), i, null, false));
            }
            if (!Scopes.authorizeWrite(table, stored.get().scopes(), allowed)) {
                return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "delete denied by scope authorization (§3.4)");
            }
            if (validating) {
                OperationResult rejected = hooks.validate(new ValidatedOperation(i, true, table.name(), op.rowId(),
                        null, storedValues(table, stored.get()), stored.get().serverVersion(), null), true);
                if (rejected != null) return Applied.rejected(rejected);
            }
            write(tx, rows, writes, new RowWrite.Delete(table.name(), op.rowId(), i));
            return Applied.ok(StoredChange.delete(table.name(), op.rowId(), stored.get().scopes()),
                    new DeclaredReferences.Staged(table, op.rowId(), i, null, true));
        }

        WriteSemantics.Decision decision = semantics.upsert(table, op, i, stored,
                () -> rows.tombstoned(table.name(), op.rowId()), allowed);
        if (decision.rejection() != null) return Applied.rejected(decision.rejection());
        WriteSemantics.Write w = decision.write();
        Applied unsupported = refuseCrdtValues(table, w.values(), i);
        if (unsupported != null) return unsupported;
        OperationResult missingBlob = BlobExistence.check(table, w.values(), w.storedValues(), i,
                presentBlobs == null ? Set.of() : presentBlobs, blobs != null);
        if (missingBlob != null) return Applied.rejected(missingBlob);
        StoredRow row = w.row();
        if (validating) {
            OperationResult rejected = hooks.validate(new ValidatedOperation(i, false, table.name(), op.rowId(),
                    ValidationReads.values(table, w.values()),
                    w.storedValues() == null ? null : ValidationReads.values(table, w.storedValues()),
                    stored.map(StoredRow::serverVersion).orElse(null), row.serverVersion()), true);
            if (rejected != null) return Applied.rejected(rejected);
        }
        write(tx, rows, writes, new RowWrite.Upsert(table.name(), row, i));
        return Applied.ok(StoredChange.upsert(table.name(), op.rowId(), row.serverVersion(), row.scopes(),
                row.payload()), new DeclaredReferences.Staged(table, op.rowId(), i, w.values(), stored.isPresent()));
    }

    /**
     * Stages a row write: with the append when {@code writes} collects them, else at once (validators read the
     * candidate state); either way later operations of the commit see it.
     */
    private static void write(StorageTransaction tx, Rows rows, List<RowWrite> writes, RowWrite w) {
        if (writes != null) {
            writes.add(w);
        } else if (w instanceof RowWrite.Upsert u) {
            tx.upsertRow(u.table(), u.row(), u.opIndex());
        } else {
            tx.deleteRow(w.table(), ((RowWrite.Delete) w).rowId());
        }
        rows.put(w.table(), w instanceof RowWrite.Upsert u ? u.row().rowId() : ((RowWrite.Delete) w).rowId(),
                w instanceof RowWrite.Upsert u2 ? u2.row() : null);
    }

    /**
     * Where the reference merges {@code crdt} columns (REF push.ts: after the scope strip, before the blob check and
     * the validator). This server has no CRDT merger registry, so it answers as the reference does without one: a
     * non-NULL {@code crdt} value is {@code sync.crdt_merge_failed} (§5.10.2; storing it last-write-wins would
     * silently lose concurrent edits). NULL is an ordinary write. Non-retryable; the message names no row data.
     */
    private static Applied refuseCrdtValues(TableSchema table, Object[] values, int i) {
        List<ColumnSchema> columns = table.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() == TypeTag.CRDT && values[c] != null) {
                return Applied.reject(i, ErrorCode.SYNC_CRDT_MERGE_FAILED, "no CRDT merger registered for crdtType "
                        + Json.write(columns.get(c).crdtType()) + " (§5.10.2)");
            }
        }
        return null;
    }

    private static Map<String, Object> storedValues(TableSchema table, StoredRow stored) {
        return ValidationReads.values(table, RowCodec.decode(table.descriptors(), stored.payload()));
    }

    /** A stored result as this request sees it: applied → {@code cached} on replay; rejected stays rejected. */
    static Outcome outcome(String clientCommitId, StoredPushResult stored, boolean replay) {
        List<PushResult.OpResult> records = new ArrayList<>();
        List<PushResultDetails.Entry> details = new ArrayList<>();
        for (OperationResult r : stored.results()) {
            if (r instanceof OperationResult.Applied a) {
                records.add(new PushResult.Applied(a.opIndex()));
            } else if (r instanceof OperationResult.Conflict c) {
                records.add(new PushResult.Conflict(c.opIndex(), c.code(), c.message(), c.serverVersion(), c.serverRow(),
                        c.conflictColumns()));
            } else if (r instanceof OperationResult.Failed f) {
                records.add(new PushResult.OpError(f.opIndex(), f.code(), f.message(), f.retryable()));
                if (f.detailsJson() != null) {
                    details.add(new PushResultDetails.Entry(f.opIndex(),
                            RejectionDetails.fromJsonValue(Json.parse(f.detailsJson()))));
                }
            }
        }
        boolean applied = stored.status() == StoredPushResult.Status.APPLIED;
        PushResult.Status status = applied ? (replay ? PushResult.Status.CACHED : PushResult.Status.APPLIED)
                : PushResult.Status.REJECTED;
        PushResult result = new PushResult(clientCommitId, status, applied ? stored.commitSeq() : null, records);
        Optional<PushResultDetails> detailsFrame = details.isEmpty() || applied ? Optional.empty()
                : Optional.of(new PushResultDetails(clientCommitId, details));
        return new Outcome(result, detailsFrame, applied && !replay ? stored.commitSeq() : 0);
    }

    /**
     * A stored result whose conflicts all carry conflictColumns: a conflict stored before they were recorded gets
     * every non-CRDT column but the key of its operation's table, the reference's answer for a conflict whose
     * columns are unknown (WIRE3-DELTA §10.7); no columns when the replayed commit no longer names a known table at
     * that index. Only a wire-3 answer shows them.
     */
    private static StoredPushResult recordedConflicts(StoredPushResult stored, PushCommit commit,
                                                      CompiledSchema schema) {
        if (stored.results().stream().noneMatch(r -> r instanceof OperationResult.Conflict c
                && c.conflictColumns() == null)) {
            return stored;
        }
        List<OperationResult> results = new ArrayList<>();
        for (OperationResult r : stored.results()) {
            if (r instanceof OperationResult.Conflict c && c.conflictColumns() == null) {
                Optional<TableSchema> table = c.opIndex() < commit.operations().size()
                        ? schema.table(commit.operations().get(c.opIndex()).table()) : Optional.empty();
                byte[] columns = table.map(t -> {
                    boolean[] marked = new boolean[t.columns().size()];
                    for (int k = 0; k < marked.length; k++) {
                        marked[k] = k != t.primaryKeyIndex() && t.columns().get(k).type() != TypeTag.CRDT;
                    }
                    return ColumnBitmap.of(marked.length, marked);
                }).orElse(new byte[0]);
                r = new OperationResult.Conflict(c.opIndex(), c.code(), c.message(), c.serverVersion(), c.serverRow(),
                        columns);
            }
            results.add(r);
        }
        return new StoredPushResult(stored.status(), stored.commitSeq(), stored.recordedAtMs(), stored.cacheIdentity(),
                results);
    }

    /** §6.3: an unreadable stored result is answered, never persisted: rejected, retryable cache miss at op 0. */
    static Outcome cacheMiss(String clientCommitId) {
        return new Outcome(new PushResult(clientCommitId, PushResult.Status.REJECTED, null, List.of(
                PushResult.OpError.of(0, ErrorCode.SYNC_IDEMPOTENCY_CACHE_MISS, "persisted push result unreadable"))),
                Optional.empty(), 0);
    }
}

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
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.ScopePattern;
import syncular.jakarta.schema.TableSchema;
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
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.wire.DecodeException;
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

    private final ServerStorage storage;
    private final Clock clock;
    private final Validation validation;
    private final GroupCommit<Batch, Pushed> groups =
            new GroupCommit<>(MAX_GROUP_COMMITS, b -> b.commits().size(), this::applyGroup);

    public PushProcessor(ServerStorage storage, Clock clock, Validation validation) {
        this.storage = storage;
        this.clock = clock;
        this.validation = validation;
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

    /** One request's commits for the push phase, and how its serve-gate re-check goes under the lock. */
    public record Batch(RequestScope request, CompiledSchema schema, Map<String, List<String>> allowed,
                        List<PushCommit> commits, TransactionGate gate) {
        public Batch {
            commits = List.copyOf(commits);
        }
    }

    /**
     * What the push phase produced for one request: an outcome per commit in order, up to a {@code failure} (null
     * when none) that ended the request's push phase after them; and the partition's commit-log head and horizon
     * under the lock, which a pull of the same request reads through.
     */
    public record Pushed(List<Outcome> outcomes, RuntimeException failure, long maxCommitSeq, long horizonSeq) {
        public Pushed {
            outcomes = List.copyOf(outcomes);
        }
    }

    /**
     * Pushes a request's commits through its partition's group commit ({@link GroupCommit}): applied with the
     * commits of every request of the partition that queued meanwhile, in one transaction under one lock
     * acquisition, and answered only after that transaction committed.
     */
    public Pushed push(Batch batch) {
        return groups.submit(batch.request().identity().partition(), batch);
    }

    /**
     * Pushes {@code batch} on {@code tx}, a transaction the caller owns and finishes (a backfill batch, whose
     * projection commit and checkpoint advance must commit together): no group, no transaction of its own.
     */
    public Pushed pushOn(StorageTransaction tx, Batch batch) {
        return applyAll(tx, List.of(batch)).get(0);
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
            Batch one = new Batch(b.request(), b.schema(), b.allowed(), List.of(commit), b.gate());
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
                return storage.inTransaction(partition, tx -> applyAll(tx, group));
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
        PushPreamble pre = tx.lockForPush(running, keys, prefetch);
        Rows rows = new Rows(tx, pre.rows(), prefetch);
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
                    mine.add(outcome(commit.clientCommitId(), known, true));
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
            out.add(new Pushed(outcomes.get(i), failures.get(i), head, pre.horizonSeq()));
        }
        return out;
    }

    /**
     * The rows a group's operations target: as read under the lock, then as the group's applied commits left them.
     * A commit's own writes stay in its layer until it is applied; a rejection drops them.
     */
    private static final class Rows {
        private final StorageTransaction tx;
        private final Map<RowKey, Optional<StoredRow>> group = new HashMap<>();
        private final Map<RowKey, Optional<StoredRow>> commit = new HashMap<>();

        Rows(StorageTransaction tx, Map<RowKey, StoredRow> read, Set<RowKey> prefetched) {
            this.tx = tx;
            for (RowKey k : prefetched) group.put(k, Optional.ofNullable(read.get(k)));
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

        void put(String table, String rowId, StoredRow row) {
            commit.put(new RowKey(table, rowId), Optional.ofNullable(row));
        }

        void applied() {
            group.putAll(commit);
            commit.clear();
        }

        void rejected() { commit.clear(); }
    }

    private record Decided(StoredPushResult stored, Outcome outcome) { }

    /**
     * One commit under the group's lock: its operations (rows from {@code rows}; writes collected and sent with the
     * append, or written at once when validators read the candidate state), then the commit validator, then the
     * append with the applied result; or the rejection.
     */
    private Decided applyCommit(StorageTransaction tx, Batch b, PushCommit commit, Rows rows) {
        Identity id = b.request().identity();
        String clientId = b.request().clientId();
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
        List<RowWrite> writes = hooks == null ? new ArrayList<>() : null;
        try {
            for (int i = 0; i < commit.operations().size(); i++) {
                Applied applied = applyOperation(tx, rows, writes, b.schema(), b.allowed(),
                        commit.operations().get(i), i, hooks);
                if (applied.rejection != null) {
                    terminated = applied.rejection;
                    break;
                }
                results.add(new OperationResult.Applied(i));
                if (applied.change != null) changes.add(applied.change);
            }
            if (terminated == null && hooks != null && run.collectsEvidence()) {
                // §6.8: once, after the final staged operation and before the append
                terminated = run.validateCommit(new CommitValidator.Commit(clientId, commit.clientCommitId(),
                        id.actorId(), id.partition(), hooks.evidence), hooks.reads).orElse(null);
            }
        } catch (StorageException e) {
            terminated = refusal(e, results.size(), commit);
        }
        if (terminated == null) {
            // the seq is a placeholder: the append writes the allocated one into the stored result
            StoredPushResult applied = new StoredPushResult(StoredPushResult.Status.APPLIED, 0L, createdAtMs,
                    UUID.randomUUID().toString(), results);
            NewCommit append = new NewCommit(clientId, commit.clientCommitId(), id.actorId(), createdAtMs, changes);
            try {
                long seq = writes == null ? tx.appendCommit(append, applied) : tx.applyCommit(writes, append, applied);
                StoredPushResult stored = new StoredPushResult(StoredPushResult.Status.APPLIED, seq, createdAtMs,
                        applied.cacheIdentity(), results);
                rows.applied();
                return new Decided(stored, outcome(commit.clientCommitId(), stored, false));
            } catch (StorageException e) {
                if (e.code() == StorageErrorCode.WRITER_FENCE_REJECTED) {
                    // This process runs an older schema than the partition's fence: it is behind, not broken.
                    throw new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                            "the partition is fenced for a newer schema version; this server is behind", "{}");
                }
                terminated = refusal(e, e.opIndex().orElse(0), commit);
            }
        }
        rows.rejected();
        StoredPushResult rejected = new StoredPushResult(StoredPushResult.Status.REJECTED, null, createdAtMs,
                UUID.randomUUID().toString(), List.of(terminated));
        tx.rejectPush(clientId, commit.clientCommitId(), rejected);
        return new Decided(rejected, outcome(commit.clientCommitId(), rejected, false));
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

    private record Applied(StoredChange change, OperationResult rejection) {
        static Applied ok(StoredChange change) { return new Applied(change, null); }

        static Applied reject(int opIndex, ErrorCode code, String message) {
            return new Applied(null, new OperationResult.Failed(opIndex, code.wire(), message, code.retryable(), null));
        }
    }

    /**
     * REF upsert pipeline (SPEC-DIGEST §8.2): table → resolver → decode → PK → auth → conflict → strip → validator
     * (§6.7) → write. {@code hooks} is null when no validator is active.
     */
    private static Applied applyOperation(StorageTransaction tx, Rows rows, List<RowWrite> writes,
                                          CompiledSchema schema, Map<String, List<String>> allowed,
                                          PushCommit.Operation op, int i, Hooks hooks) {
        Optional<TableSchema> maybeTable = schema.table(op.table());
        if (maybeTable.isEmpty()) {
            return Applied.reject(i, ErrorCode.SYNC_UNKNOWN_TABLE, "the table is not handled by this server");
        }
        TableSchema table = maybeTable.get();
        if (allowed == null) return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "scope resolution failed (§3.4)");
        // before the first read: a rowId the database cannot hold is refused even as a query parameter
        OperationResult unstorable = StorableInput.rowId(i, op.rowId());
        if (unstorable != null) return new Applied(null, unstorable);
        Optional<StoredRow> stored = rows.get(table.name(), op.rowId());

        boolean validating = hooks != null && hooks.run.wants(table.name());
        if (op.op() == Op.DELETE) {
            if (stored.isEmpty()) {
                // §6.2: absent-row delete applies, changes nothing; §6.7 runs no validator, §6.8 still sees it
                if (validating) hooks.validate(new ValidatedOperation(i, true, table.name(), op.rowId(), null, null,
                        null, null), false);
                return Applied.ok(null);
            }
            if (!Scopes.authorizeWrite(table, stored.get().scopes(), allowed)) {
                return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "delete denied by scope authorization (§3.4)");
            }
            if (validating) {
                OperationResult rejected = hooks.validate(new ValidatedOperation(i, true, table.name(), op.rowId(),
                        null, storedValues(table, stored.get()), stored.get().serverVersion(), null), true);
                if (rejected != null) return new Applied(null, rejected);
            }
            write(tx, rows, writes, new RowWrite.Delete(table.name(), op.rowId(), i));
            return Applied.ok(StoredChange.delete(table.name(), op.rowId(), stored.get().scopes()));
        }

        Object[] values;
        try {
            values = RowCodec.decode(table.descriptors(), op.payload());
        } catch (DecodeException e) {
            return Applied.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "row payload failed row-codec decode (§1.7)");
        }
        Optional<String> pk = Scopes.render(values[table.primaryKeyIndex()]);
        if (pk.isEmpty() || !pk.get().equals(op.rowId())) {
            return Applied.reject(i, ErrorCode.SYNC_INVALID_REQUEST, "payload primary key does not match rowId");
        }
        unstorable = StorableInput.jsonColumns(i, table, values);
        if (unstorable != null) return new Applied(null, unstorable);

        if (stored.isPresent()) {
            StoredRow s = stored.get();
            if (!Scopes.authorizeWrite(table, s.scopes(), allowed)) {
                return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
            }
            if (op.baseVersion() != null && op.baseVersion() != s.serverVersion()) {
                return new Applied(null, new OperationResult.Conflict(i, ErrorCode.SYNC_VERSION_CONFLICT.wire(),
                        "row version does not match baseVersion (§6.2)", s.serverVersion(), s.payload(), List.of()));
            }
            // §3.4: scope columns are immutable on update; the stored values win.
            Object[] storedValues = RowCodec.decode(table.descriptors(), s.payload());
            boolean mutated = false;
            for (ScopePattern p : table.scopes()) {
                int c = table.columnIndex(p.column());
                if (!java.util.Objects.equals(values[c], storedValues[c])) {
                    values[c] = storedValues[c];
                    mutated = true;
                }
            }
            Applied unsupported = refuseCrdtAndBlobValues(table, values, i);
            if (unsupported != null) return unsupported;
            byte[] payload = mutated ? RowCodec.encode(table.descriptors(), values) : op.payload();
            long version = s.serverVersion() + 1;
            if (validating) {
                OperationResult rejected = hooks.validate(new ValidatedOperation(i, false, table.name(), op.rowId(),
                        ValidationReads.values(table, values), ValidationReads.values(table, storedValues),
                        s.serverVersion(), version), true);
                if (rejected != null) return new Applied(null, rejected);
            }
            write(tx, rows, writes, new RowWrite.Upsert(table.name(),
                    new StoredRow(op.rowId(), version, s.scopes(), payload), i));
            return Applied.ok(StoredChange.upsert(table.name(), op.rowId(), version, s.scopes(), payload));
        }

        Scopes.Extracted extracted = Scopes.extract(table, values);
        if (op.baseVersion() != null && op.baseVersion() != 0) {
            if (extracted.missing() != null || !Scopes.authorizeWrite(table, extracted.scopes(), allowed)) {
                return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "write denied by scope authorization (§3.4)");
            }
            return Applied.reject(i, ErrorCode.SYNC_ROW_MISSING, "upsert with baseVersion targets an absent row (§6.2)");
        }
        if (extracted.missing() != null) {
            return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "insert lacks a value for a scope column (§3.4)");
        }
        unstorable = StorableInput.scopes(i, table, extracted.scopes());
        if (unstorable != null) return new Applied(null, unstorable);
        if (!Scopes.authorizeWrite(table, extracted.scopes(), allowed)) {
            return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "insert denied by scope authorization (§3.4)");
        }
        Applied unsupported = refuseCrdtAndBlobValues(table, values, i);
        if (unsupported != null) return unsupported;
        if (validating) {
            OperationResult rejected = hooks.validate(new ValidatedOperation(i, false, table.name(), op.rowId(),
                    ValidationReads.values(table, values), null, null, 1L), true);
            if (rejected != null) return new Applied(null, rejected);
        }
        write(tx, rows, writes, new RowWrite.Upsert(table.name(),
                new StoredRow(op.rowId(), 1, extracted.scopes(), op.payload()), i));
        return Applied.ok(StoredChange.upsert(table.name(), op.rowId(), 1, extracted.scopes(), op.payload()));
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
     * Where the reference merges {@code crdt} columns and checks {@code blob_ref} existence (REF push.ts: after the
     * scope strip, before the validator), in its order. This server has neither a CRDT merger registry nor a blob
     * store, so it answers as the reference does without them: a non-NULL {@code crdt} value is
     * {@code sync.crdt_merge_failed} (§5.10.2; storing it last-write-wins would silently lose concurrent edits) and
     * a non-NULL {@code blob_ref} is {@code blob.not_found} (§5.9.6, §6.6: no referenced blob exists). NULL is an
     * ordinary write for both (a clear, "no attachment"). Non-retryable; the message names no row data.
     */
    private static Applied refuseCrdtAndBlobValues(TableSchema table, Object[] values, int i) {
        List<ColumnSchema> columns = table.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() == TypeTag.CRDT && values[c] != null) {
                return Applied.reject(i, ErrorCode.SYNC_CRDT_MERGE_FAILED, "no CRDT merger registered for crdtType "
                        + Json.write(columns.get(c).crdtType()) + " (§5.10.2)");
            }
        }
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() == TypeTag.BLOB_REF && values[c] != null) {
                return Applied.reject(i, ErrorCode.BLOB_NOT_FOUND,
                        "row references a blob but the server has no blob store (§5.9.6)");
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
                        null)); // wire 3: filled by the push rule set
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

    /** §6.3: an unreadable stored result is answered, never persisted: rejected, retryable cache miss at op 0. */
    static Outcome cacheMiss(String clientCommitId) {
        return new Outcome(new PushResult(clientCommitId, PushResult.Status.REJECTED, null, List.of(
                PushResult.OpError.of(0, ErrorCode.SYNC_IDEMPOTENCY_CACHE_MISS, "persisted push result unreadable"))),
                Optional.empty(), 0);
    }
}

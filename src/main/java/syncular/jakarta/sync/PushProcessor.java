package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * Applies one PUSH_COMMIT (SPEC §6, ARCHITECTURE request step 4): an optimistic idempotency lookup, then one
 * transaction of its own: partition lock (+ savepoint), serve-gate re-read on that connection, idempotency re-check,
 * per operation authorization, conflicts, row validators (§6.7) and writes, the commit validator (§6.8), append with
 * the writer version, the push result in the same transaction. A rejected operation is a value: the transaction rolls back to the savepoint, stores the rejection
 * and commits, still under the lock. Only infrastructure failures throw.
 *
 * <p>The wire version is a parameter of the pipeline, never a constant: wire 3 changes this path (WIRE3-DELTA).
 */
public final class PushProcessor {
    private final ServerStorage storage;
    private final Clock clock;
    private final Validation validation;

    public PushProcessor(ServerStorage storage, Clock clock) { this(storage, clock, Validation.NONE); }

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

    /**
     * @param allowed the actor's allowed scopes, resolved once per request; null when the resolver failed
     * @param gate    re-checks the serve gate on the push transaction's connection
     */
    public Outcome apply(RequestScope request, CompiledSchema schema, Map<String, java.util.List<String>> allowed,
                         PushCommit commit, TransactionGate gate) {
        Identity id = request.identity();
        String clientId = request.clientId();
        Optional<StoredPushResult> persisted = lookup(() -> storage.getPushResult(id.partition(), clientId,
                commit.clientCommitId()));
        if (persisted == null) return cacheMiss(commit.clientCommitId());
        if (persisted.isPresent()) return outcome(commit.clientCommitId(), persisted.get(), true);

        long createdAtMs = clock.nowMs();
        return storage.inTransaction(id.partition(), tx -> {
            lockPartition(tx);
            gate.check(tx);
            Optional<StoredPushResult> again = lookup(() -> tx.getPushResult(clientId, commit.clientCommitId()));
            if (again == null) return cacheMiss(commit.clientCommitId());
            if (again.isPresent()) return outcome(commit.clientCommitId(), again.get(), true);

            List<OperationResult> results = new ArrayList<>();
            List<StoredChange> changes = new ArrayList<>();
            OperationResult terminated = null;
            Validation.Run run = validation.begin();
            Hooks hooks = run == null ? null : new Hooks(run, new ValidationReads(tx, schema, id.actorId()));
            try {
                for (int i = 0; i < commit.operations().size(); i++) {
                    Applied applied = applyOperation(tx, schema, allowed, commit.operations().get(i), i, hooks);
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
                if (e.code() == StorageErrorCode.CONSTRAINT_VIOLATION) {
                    terminated = new OperationResult.Failed(e.opIndex().orElse(0),
                            ErrorCode.SYNC_CONSTRAINT_VIOLATION.wire(), "write violates a relational constraint", false,
                            null);
                } else if (e.code() == StorageErrorCode.DATA_REJECTED) {
                    // a value the database refuses (class 22/54) fails the same way on every retry: a stored
                    // rejection, never a 500 that wedges the client's outbox. Without an index from the write, it
                    // is the operation in progress (results holds one entry per operation before it).
                    int at = e.opIndex().orElse(Math.min(results.size(), commit.operations().size() - 1));
                    terminated = StorableInput.refused(at);
                } else {
                    throw e;
                }
            }
            if (terminated != null) return reject(tx, clientId, commit.clientCommitId(), createdAtMs, terminated);
            long seq;
            try {
                seq = tx.appendCommit(new NewCommit(clientId, commit.clientCommitId(), id.actorId(), createdAtMs, changes));
            } catch (StorageException e) {
                if (e.code() == StorageErrorCode.WRITER_FENCE_REJECTED) {
                    // This process runs an older schema than the partition's fence: it is behind, not broken.
                    throw new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                            "the partition is fenced for a newer schema version; this server is behind", "{}");
                }
                // a commit-log value (a change's scopes) the per-operation checks missed: nothing is appended
                if (e.code() == StorageErrorCode.DATA_REJECTED) {
                    return reject(tx, clientId, commit.clientCommitId(), createdAtMs, StorableInput.refused(0));
                }
                throw e;
            }
            StoredPushResult applied = new StoredPushResult(StoredPushResult.Status.APPLIED, seq, createdAtMs,
                    UUID.randomUUID().toString(), results);
            tx.putPushResult(clientId, commit.clientCommitId(), applied);
            return outcome(commit.clientCommitId(), applied, false);
        });
    }

    /**
     * The partition lock, bounded by the storage's lock timeout (issue 13): a push that cannot get it in time is
     * answered {@code sync.rate_limited} (retryable; its transaction rolls back, nothing is stored) instead of holding
     * a pooled connection for as long as somebody else holds the lock.
     */
    private static void lockPartition(StorageTransaction tx) {
        try {
            tx.lockPartitionForPush();
        } catch (StorageException e) {
            if (e.code() != StorageErrorCode.LOCK_NOT_AVAILABLE) throw e;
            throw new SyncException(ErrorCode.SYNC_RATE_LIMITED,
                    "the partition lock was not available within the lock timeout; retry later");
        }
    }

    /** Rolls back to the push savepoint and stores the rejection; the transaction then commits (SPEC §6.3). */
    private static Outcome reject(StorageTransaction tx, String clientId, String clientCommitId, long createdAtMs,
                                  OperationResult terminated) {
        StoredPushResult rejected = new StoredPushResult(StoredPushResult.Status.REJECTED, null, createdAtMs,
                UUID.randomUUID().toString(), List.of(terminated));
        tx.rejectPush(clientId, clientCommitId, rejected);
        return outcome(clientCommitId, rejected, false);
    }

    /** The push transaction's serve-gate re-read (RFC 0007 gate point 4). */
    @FunctionalInterface
    public interface TransactionGate {
        void check(StorageTransaction tx);
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
    private static Applied applyOperation(StorageTransaction tx, CompiledSchema schema,
                                          Map<String, List<String>> allowed, PushCommit.Operation op, int i,
                                          Hooks hooks) {
        Optional<TableSchema> maybeTable = schema.table(op.table());
        if (maybeTable.isEmpty()) {
            return Applied.reject(i, ErrorCode.SYNC_UNKNOWN_TABLE, "the table is not handled by this server");
        }
        TableSchema table = maybeTable.get();
        if (allowed == null) return Applied.reject(i, ErrorCode.SYNC_FORBIDDEN, "scope resolution failed (§3.4)");
        // before the first read: a rowId the database cannot hold is refused even as a query parameter
        OperationResult unstorable = StorableInput.rowId(i, op.rowId());
        if (unstorable != null) return new Applied(null, unstorable);
        Optional<StoredRow> stored = tx.getRow(table.name(), op.rowId());

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
            tx.deleteRow(table.name(), op.rowId());
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
            tx.upsertRow(table.name(), new StoredRow(op.rowId(), version, s.scopes(), payload), i);
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
        tx.upsertRow(table.name(), new StoredRow(op.rowId(), 1, extracted.scopes(), op.payload()), i);
        return Applied.ok(StoredChange.upsert(table.name(), op.rowId(), 1, extracted.scopes(), op.payload()));
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
                records.add(new PushResult.Conflict(c.opIndex(), c.code(), c.message(), c.serverVersion(), c.serverRow()));
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
    private static Outcome cacheMiss(String clientCommitId) {
        return new Outcome(new PushResult(clientCommitId, PushResult.Status.REJECTED, null, List.of(
                PushResult.OpError.of(0, ErrorCode.SYNC_IDEMPOTENCY_CACHE_MISS, "persisted push result unreadable"))),
                Optional.empty(), 0);
    }

    /** Runs an idempotency lookup; null stands for "unreadable" (the cache-miss answer). */
    private static Optional<StoredPushResult> lookup(java.util.function.Supplier<Optional<StoredPushResult>> read) {
        try {
            return read.get();
        } catch (StorageException e) {
            if (e.code() == StorageErrorCode.IDEMPOTENCY_CACHE_MISS) return null;
            throw e;
        }
    }
}

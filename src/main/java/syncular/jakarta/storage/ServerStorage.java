package syncular.jakarta.storage;

import java.sql.Connection;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import syncular.jakarta.schema.CompiledSchema;

/**
 * The server storage contract (upstream 0.24 {@code ServerStorage}, UPSTREAM-SERVER §2.2 and §3). Thread-safe.
 *
 * <p>Methods that need their own transaction run it through the storage's {@link TransactionRunner}; reads run on a
 * connection of their own (autocommit, or enlisted in an ambient JTA transaction, which they never finish).
 * {@link #runUnit} runs the storage's unit of work (a push group, a backfill batch) on a connection the caller already
 * has inside its transaction: the container's, when a {@code @Stateless} service's method is the unit
 * ({@link UnitTransactions}).
 */
public interface ServerStorage {
    // ------------------------------------------------------------------ schema

    /**
     * Creates or migrates the database for {@code schema} (memoized per instance and version). Refuses a newer
     * stored version ({@link StorageErrorCode#STORED_SCHEMA_NEWER}), a same-version database whose stored or
     * physical layout differs ({@link StorageErrorCode#STORED_LAYOUT_MISMATCH},
     * {@link StorageErrorCode#PHYSICAL_LAYOUT_MISMATCH}) and a non-append-only bump
     * ({@link StorageErrorCode#MIGRATION_REFUSED}). A migration installs {@code declarations} (checkpoint rows and
     * fences) in its own transaction. Throws {@link StorageErrorCode#CHECKPOINT_INCOMPLETE} when a non-activated
     * checkpoint at this version was not declared by the caller.
     */
    void ensureSchema(CompiledSchema schema, List<CheckpointDeclaration> declarations);

    /** The schema version memoized by the last successful {@link #ensureSchema}, 0 before: the writer version. */
    int writerVersion();

    // --------------------------------------------------------------- partitions

    /** Creates or refreshes the registry row after authentication (SPEC §2.1); returns the stored epoch. */
    PartitionRegistryEntry touchPartition(String partition, long authenticatedAtMs, String initialLogEpoch);

    /** Restore: sets a new epoch, marks it required and deletes the partition's client records, atomically. */
    PartitionRegistryEntry rotatePartitionLogEpoch(String partition, String logEpoch, long authenticatedAtMs);

    List<PartitionRegistryEntry> listPartitionRegistry();

    /** The epoch without touching the activity time. */
    Optional<String> getPartitionLogEpoch(String partition);

    // -------------------------------------------------------------- transactions

    /** A request's {@link StorageSession} for {@code partition}; it takes no connection until first used. */
    StorageSession openSession(String partition);

    /**
     * Runs {@code work} as the storage's unit of work on the caller's connection, which must be inside a transaction
     * on which nothing has run yet (READ COMMITTED is set as its first statement): a {@link StorageTransaction} for
     * {@code partition}, whose appends under the push lock write the partition's log head back once, and, when
     * {@code staged}, whose writes under the lock travel together in as few round trips as the order allows. All of it
     * is sent before this returns; the caller then commits (or rolls back on a throw). A staged write the database
     * refuses throws {@link StagedWritesRefused}: roll back and run the unit again with {@code staged} false
     * ({@link StagedWritesRefused#stagedThenUnstaged}).
     */
    <T> T runUnit(Connection connection, String partition, boolean staged, TransactionWork<T> work);

    /** {@link #runUnit} in a new transaction of the storage's {@link TransactionRunner}, staged, then unstaged. */
    <T> T inTransaction(String partition, TransactionWork<T> work);

    @FunctionalInterface
    interface TransactionWork<T> {
        T run(StorageTransaction tx);
    }

    // --------------------------------------------------------------- commit log

    long getMaxCommitSeq(String partition);

    long getHorizonSeq(String partition);


    /**
     * Atomically: checks the registered epoch equals {@code query.logEpoch()} (else
     * {@link StorageErrorCode#PRUNE_EPOCH_MISMATCH}; unregistered → {@link StorageErrorCode#PARTITION_UNREGISTERED}),
     * raises the horizon to {@code throughSeq} (never lowers it) and deletes the log at or below the horizon.
     */
    CommitPruneResult pruneCommitsThrough(String partition, CommitPruneQuery query);

    /** Newest commitSeq created strictly before the time; 0 if none. */
    long getCommitSeqBefore(String partition, long createdBeforeMs);



    // ---------------------------------------------------------- idempotency, clients


    Optional<ClientRecord> getClientRecord(String partition, String clientId);

    void putClientRecord(String partition, ClientRecord record);

    List<ClientCursorInfo> listClientCursors(String partition);

    // ------------------------------------------------------- blob reference index (SPEC §5.9.4)

    /** A row that references a blob through one of its {@code blob_ref} columns, with its stored scopes. */
    record BlobReference(String table, String rowId, java.util.Map<String, String> scopes) { }

    /**
     * The rows of the partition whose {@code blob_ref} columns reference {@code blobId} (the §5.9.5 download
     * authorization's candidates), ordered by (table, row id) strictly after {@code after} (null: from the start), at
     * most {@code limit}, in one round trip. The index is maintained by every row write in its own statement.
     */
    List<BlobReference> blobReferences(String partition, String blobId, RowKey after, int limit);

    /** Which of {@code blobIds} a row of the partition references (the §5.9.2 orphan sweep's keep-set). */
    java.util.Set<String> referencedBlobIds(String partition, Collection<String> blobIds);

    // ---------------------------------------------------------------- RFC 0007


    /** The serve-gate token; never memoized. {@code pending} spans all partitions. */
    ServeGate readServeGate(String partition, int runningSchemaVersion);


    /** Non-activated checkpoints at {@code schemaVersion} with one of {@code names}, in every partition. */
    List<PendingCheckpoint> pendingCheckpoints(int schemaVersion, Collection<String> names);

    /** Every partition the commit log or the registry knows (a migration installs checkpoints for each). */
    List<String> knownPartitions();

    /** Raises every registered partition's writer fence to at least {@code version}; returns how many moved. */
    int raiseRegistryFences(int version);

    /** Every checkpoint with its backfill pass position, for the operator surface. */
    List<BackfillPass.Progress> backfillProgress();

    /**
     * An operator pauses ({@code pausedAtMs}) or resumes ({@code null}) a checkpoint that is not activated, on
     * every node at once: a paused one is not claimed, so neither batches nor activation run. False when the
     * partition has no such pending checkpoint.
     */
    boolean setCheckpointPaused(String partition, String name, Long pausedAtMs);

    /** Rows a full pass over {@code tables} visits in the partition (an ETA's total; a count, not a hot path). */
    long countSourceRows(String partition, Collection<String> tables);

    /** Log entries a catch-up pass over {@code (fromSeq, throughSeq]} of {@code tables} visits (an ETA's total). */
    long countChanges(String partition, Collection<String> tables, long fromSeq, long throughSeq);

    /**
     * {@code tables} just received rows in bulk (a backfill's projection): a storage whose query planner estimates
     * from statistics refreshes them for these tables and for the indexes every row write maintains, in a short
     * transaction of its own, so the next writes are planned for the data as it now is. Best effort: a refresh that
     * cannot run now (a lock held, no privilege) is skipped and logged, never an error of the caller's work.
     */
    void refreshPlannerStatistics(Collection<String> tables);

    /**
     * Under the partition lock: fence present and at least the checkpoint's version (else
     * {@link StorageErrorCode#CHECKPOINT_FENCE_MISSING}); a source change above the watermark → {@code STALE}, which
     * wins over a horizon past the watermark → {@code UNVERIFIABLE}; then the owner-epoch compare-and-set.
     */
    ActivationOutcome activateCheckpoint(String partition, String name, long ownerEpoch, long watermark,
                                         Collection<String> sources, long nowMs);
}

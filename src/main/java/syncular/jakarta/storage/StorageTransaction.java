package syncular.jakarta.storage;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Storage operations on ONE connection inside the caller's transaction, bound to one partition (UPSTREAM-SERVER
 * §2.1). Handed to a unit of work by {@link ServerStorage#runUnit}; it never commits, rolls back or toggles
 * autocommit: the {@link TransactionRunner} or the JTA container finishes the transaction. Not thread-safe: one push
 * at a time.
 *
 * <p>A push group uses it in this order (ARCHITECTURE request step 4): {@link #lockForPush} (lock, savepoint,
 * gate, the idempotency re-check of every commit of the group and the rows they target, one round trip), then per
 * commit: reads, then either {@link #applyCommit} with every row write of the commit (writes, commit and result in
 * one round trip; the caller keeps track of its own pending writes until then), or eager {@link #upsertRow} /
 * {@link #deleteRow} (when validators must read the candidate state) and
 * {@link #appendCommit(NewCommit, StoredPushResult)}; or, when an operation is rejected, {@link #rejectPush}. Then
 * {@link #nextCandidate()} before the next commit of the group. Every database round trip made while the lock is
 * held is time no other writer of the partition can use.
 *
 * <p>Under the lock the transaction numbers its appends from the locked head (dense, as SPEC §6.1 asks: nobody else
 * can append meanwhile). The partition's head and the commit feed's signal are written once, before the unit
 * returns; in a staged unit the writes travel together too, in an unstaged one each commit's writes are sent at once.
 */
public interface StorageTransaction {
    String partition();

    /**
     * Serializes every push apply for this partition (SPEC §6.1): the partition row is created if absent and locked
     * {@code FOR UPDATE} until the transaction ends, then a savepoint marks the start of the candidate writes.
     */
    void lockPartitionForPush();

    /**
     * {@link #lockPartitionForPush()}, {@link #readServeGate}, the stored results of {@code commits} and the rows of
     * {@code prefetch} (and, with {@code tombstones}, which of them have a tombstone), in that order, in one round
     * trip: the lock is held before anything is read. The partition's commit-log head and horizon come from the
     * locked row. Only wire-3 pushes consult tombstones, so a group without one does not read them.
     */
    PushPreamble lockForPush(int runningSchemaVersion, Collection<PushKey> commits, Collection<RowKey> prefetch,
                             boolean tombstones);

    /**
     * Rows first (a backfill batch, issue 21): before the partition lock, the stored results of {@code commits}, the
     * rows of {@code rows} locked {@code FOR UPDATE} where they exist (and, with {@code tombstones}, which have a
     * tombstone), in one round trip; then {@link #writeRowsIfUnchanged} and only then {@link #lockAndAppend}. Such a
     * transaction takes row locks before the partition lock, the reverse of every push, so from here on each of its
     * lock waits, the partition lock's included, gives up within a yield timeout shorter than PostgreSQL's deadlock
     * check with {@link StorageErrorCode#LOCK_NOT_AVAILABLE}: when a push waits for one of its rows while holding the
     * partition lock, this transaction is the one that fails, never the push. The preamble has no gate and no head.
     */
    PushPreamble lockRowsForPush(Collection<PushKey> commits, Collection<RowKey> rows, boolean tombstones);

    /**
     * Rows first, after {@link #lockRowsForPush}: every write now, in one round trip, each row as its write expects
     * it (a write at version 1 only where the row is still absent, a later one only over the version below it). Each
     * row at most once, a delete only of a row the read found.
     * {@code false} when a row was not (a push inserted it after the read), and when a row written at version 1 finds
     * an index entry of its own already there: the caller must roll back, as writes of the other rows and the scope
     * index may have happened.
     */
    boolean writeRowsIfUnchanged(List<RowWrite> writes);

    /**
     * Rows first, after {@link #writeRowsIfUnchanged}: the partition lock (the yield timeout still bounds its wait),
     * the serve gate, the stored result of {@code key}, and the append of {@code commit} with its applied result, in
     * ONE round trip, so the lock is held for that statement and the COMMIT only. The gate and the stored result are
     * checked on the answer: when either forbids the commit, the caller must roll back. No push follows on this
     * transaction.
     */
    LockedAppend lockAndAppend(int runningSchemaVersion, PushKey key, NewCommit commit, StoredPushResult applied);

    /**
     * Under the push lock: the current candidate commit is complete (applied or rejected) and stays; the next
     * candidate's writes get a savepoint of their own, taken in front of its first write, so its rejection rolls back
     * only its own writes.
     */
    void nextCandidate();

    /** The current row, including this transaction's writes. */
    Optional<StoredRow> getRow(String table, String rowId);

    /**
     * Whether the row has a tombstone: an applied delete of it that no later insert cleared and no prune has reached
     * (WIRE3-DELTA §4; {@link #lockForPush} answers this for the rows it prefetches).
     */
    boolean hasTombstone(String table, String rowId);

    /** The current rows of {@code rowIds} that exist, in one round trip (a catch-up pass's batch, issue 21). */
    List<StoredRow> getRows(String table, Collection<String> rowIds);

    /** Idempotency lookup on this connection; unreadable → {@link StorageErrorCode#IDEMPOTENCY_CACHE_MISS}. */
    Optional<StoredPushResult> getPushResult(String clientId, String clientCommitId);

    /** Candidate-state scoped scan (reads this transaction's writes). */
    List<StoredRow> scanRows(RowScanQuery query);

    /**
     * The rows of {@code childTable} in this partition whose reference column {@code column} names the parent row
     * {@code parentRowId} (SPEC §6.11: the children a parent delete restricts, cascades to or sets null), in byte
     * order of row id strictly after {@code afterRowId} ({@code null} = from the start), at most {@code limit}, with
     * their column versions. A child matches when its column's value, rendered as a row id (§2.4: a string as is, an
     * integer in decimal, a boolean as {@code true}/{@code false}, JSON as its text), equals {@code parentRowId}; an
     * id the column's type cannot render matches nothing. Candidate state: it sees this transaction's own writes,
     * staged ones included. A page shorter than {@code limit} is the last; page on with the last row id returned.
     * One index range over ({@code column}, row id) per call, one round trip in the common case.
     *
     * @throws IllegalArgumentException when {@code column} declares no reference (there is no index to scan) or
     *                                  {@code limit} &lt; 1
     */
    List<StoredRow> scanRowsByReference(String childTable, String column, String parentRowId, String afterRowId,
                                        int limit);

    /**
     * Writes the row and its scope-index entries; typed projection columns are derived from the payload in the
     * same statement. A relational constraint failure throws {@link StorageErrorCode#CONSTRAINT_VIOLATION} carrying
     * {@code opIndex}; the transaction must then be rolled back to the push savepoint ({@link #rejectPush}).
     */
    void upsertRow(String table, StoredRow row, int opIndex);

    /** Removes the row and its scope-index entries; absent rows are a no-op. */
    void deleteRow(String table, String rowId);

    /**
     * Appends a commit: allocates the next dense commitSeq of the partition, writes the commit (stamped with this
     * storage's writer version), its changes and their change-scope index entries. The writer-fence trigger may
     * refuse it with {@link StorageErrorCode#WRITER_FENCE_REJECTED}.
     */
    long appendCommit(NewCommit commit);

    /**
     * {@link #appendCommit(NewCommit)} and {@link #putPushResult} of the applied result in one statement; the
     * result's {@code commitSeq} is replaced by the allocated one. {@code applied} must be an applied result.
     */
    long appendCommit(NewCommit commit, StoredPushResult applied);

    /**
     * Applies every row write of a commit in order, then {@link #appendCommit(NewCommit, StoredPushResult)}, in one
     * round trip; requires {@link #lockPartitionForPush()} or {@link #lockForPush} first. A constraint violation
     * throws {@link StorageErrorCode#CONSTRAINT_VIOLATION} with the {@code opIndex} of the write that caused it
     * (found by rolling back to the push savepoint and replaying the writes one by one, on that rare path only);
     * then call {@link #rejectPush}.
     */
    long applyCommit(List<RowWrite> writes, NewCommit commit, StoredPushResult applied);

    /** Stores a push outcome; the first writer wins (a second put for the key is a no-op). */
    void putPushResult(String clientId, String clientCommitId, StoredPushResult result);

    /**
     * Under the push lock: discards every write since {@link #lockPartitionForPush()} (rolls back to its savepoint)
     * and stores the rejected result. The caller then returns normally; the lock is held until the transaction ends.
     */
    void rejectPush(String clientId, String clientCommitId, StoredPushResult rejected);

    // ------------------------------------------------ a backfill batch (RFC 0007, issue 7), on its transaction

    /**
     * Claims the checkpoint for this batch: owner epoch + 1, declared → backfilling (the UPDATE's row lock
     * serializes claimers); empty when it is activated or absent.
     */
    Optional<StoredCheckpoint> claimCheckpoint(String name, int schemaVersion, long nowMs);

    /** The checkpoint's pass position, empty before its first batch. */
    Optional<BackfillPass> readBackfillPass(String name);

    /** Stores the pass position; it commits with the batch's projection writes and checkpoint advance or not at all. */
    void saveBackfillPass(BackfillPass pass);

    /** Current rows of a source table after {@code afterRowId} in byte order of row id (keyset, no OFFSET). */
    List<StoredRow> scanSourceRows(String table, String afterRowId, int limit);

    /** Source changes of the log after ({@code afterSeq}, {@code afterIdx}), at or below {@code throughSeq}. */
    List<BackfillPass.ChangedRow> changedRows(Collection<String> tables, long afterSeq, int afterIdx, long throughSeq,
                                              int limit);

    /** Highest commitSeq with a change to one of {@code tables}; 0 when none: the watermark a pass now certifies. */
    long sourceCoverageSeq(Collection<String> tables);

    /** The partition's pruning horizon (0 when it has no log yet). */
    long horizonSeq();

    /**
     * A source change above {@code seq} → {@code CHANGED}, which wins over a horizon past {@code seq} →
     * {@code UNVERIFIABLE}; else {@code CLEAN} (seeds/003 {@code hasSourceChangesAbove}, one snapshot).
     */
    SourceCoverage sourceChangesAbove(Collection<String> tables, long seq);

    /**
     * {@link ServerStorage#activateCheckpoint} on this transaction, which may already hold the push lock and carry
     * the last catch-up's projection writes: they and the activation then commit together, with no source change
     * able to land in between.
     */
    ActivationOutcome activateCheckpoint(String name, long ownerEpoch, long watermark, Collection<String> sources,
                                         long nowMs);

    /** RFC 0007 owner-epoch compare-and-set inside the backfill's write; {@code false} means abort, write nothing. */
    boolean advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs);

    /**
     * Elects this transaction the one cluster-wide runner of a backfill batch for checkpoint {@code name} of this
     * partition (ARCHITECTURE "Transactions, locks, time"): {@code true} when it got the lock, which the database
     * frees when this transaction ends; {@code false} when another transaction holds it. Never waits.
     */
    boolean tryLockBackfillBatch(String name);

    /** The serve-gate token on this connection, so the gate and the write share one transaction. */
    ServeGate readServeGate(int runningSchemaVersion);

    /**
     * One read-only SELECT over the application tables on this transaction's connection, every unqualified
     * reference to a schema table bound to this partition (seeds/001 {@code queryAuthoritative}, for validators,
     * SPEC §6.7/§6.8); rows as column label → value. The default refuses: a storage without it must fail loudly,
     * never read on another connection.
     */
    default List<java.util.Map<String, Object>> queryAuthoritative(String sql, List<?> params) {
        throw new UnsupportedOperationException("this storage cannot run authoritative queries in a transaction");
    }
}

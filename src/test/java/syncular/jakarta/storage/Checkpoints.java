package syncular.jakarta.storage;

import java.util.Collection;

/**
 * Tests' one-call checkpoint operations, each in a transaction of its own through the storage contract (the
 * backfill runs them on its batch's transaction; the contract has no own-transaction twins).
 */
public final class Checkpoints {
    private Checkpoints() { }

    /** Every checkpoint of the partition, ordered by name (the operator surface's progress view, narrowed). */
    public static java.util.List<StoredCheckpoint> read(ServerStorage s, String partition) {
        return s.backfillProgress().stream().map(BackfillPass.Progress::checkpoint)
                .filter(c -> c.partition().equals(partition)).toList();
    }

    /** Owner epoch + 1; absent or activated → {@link StorageErrorCode#CHECKPOINT_NOT_DECLARED}. */
    public static StoredCheckpoint claim(ServerStorage s, String partition, String name, int schemaVersion,
                                         long nowMs) {
        return s.inTransaction(partition, tx -> tx.claimCheckpoint(name, schemaVersion, nowMs))
                .orElseThrow(() -> new StorageException(StorageErrorCode.CHECKPOINT_NOT_DECLARED));
    }

    public static boolean advance(ServerStorage s, String partition, String name, long ownerEpoch, long watermark,
                                  long observedRows, long nowMs) {
        return s.inTransaction(partition, tx -> tx.advanceCheckpoint(name, ownerEpoch, watermark, observedRows,
                nowMs));
    }

    public static long coverage(ServerStorage s, String partition, Collection<String> tables) {
        return s.inTransaction(partition, tx -> tx.sourceCoverageSeq(tables));
    }

    public static SourceCoverage changesAbove(ServerStorage s, String partition, Collection<String> tables,
                                              long seq) {
        return s.inTransaction(partition, tx -> tx.sourceChangesAbove(tables, seq));
    }
}

package syncular.jakarta.storage;

import java.util.List;
import java.util.Optional;

/**
 * Tests' one-call reads of what a request stored, through the storage contract: the rows and stored results on a
 * transaction, the log and snapshot pages on a session (the contract has no separate read twins of these).
 */
public final class Reads {
    private Reads() { }

    public static Optional<StoredRow> row(ServerStorage s, String partition, String table, String rowId) {
        return s.inTransaction(partition, tx -> tx.getRow(table, rowId));
    }

    public static Optional<StoredPushResult> pushResult(ServerStorage s, String partition, String clientId,
                                                        String clientCommitId) {
        return s.inTransaction(partition, tx -> tx.getPushResult(clientId, clientCommitId));
    }

    public static List<StoredRow> scan(ServerStorage s, String partition, RowScanQuery query) {
        try (StorageSession session = s.openSession(partition)) {
            return session.scanRows(query);
        }
    }

    public static CommitWindow window(ServerStorage s, String partition, CommitWindowQuery query) {
        try (StorageSession session = s.openSession(partition)) {
            return session.readCommitWindow(query, java.util.Optional.empty());
        }
    }
}

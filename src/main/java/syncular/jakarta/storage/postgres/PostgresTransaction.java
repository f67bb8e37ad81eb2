package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;

/**
 * {@link StorageTransaction} on the caller's connection (seeds/003 {@code PostgresTransaction}, minus commit and
 * rollback, which belong to the runner or the JTA container). Not thread-safe.
 */
final class PostgresTransaction implements StorageTransaction {
    private final PostgresServerStorage storage;
    private final Connection c;
    private final String partition;
    /** The schema version this transaction writes; stamped on every appended commit for the fence trigger. */
    private final int writerVersion;
    private boolean pushSavepoint;

    PostgresTransaction(PostgresServerStorage storage, Connection c, String partition, int writerVersion) {
        this.storage = storage;
        this.c = c;
        this.partition = partition;
        this.writerVersion = writerVersion;
    }

    @Override public String partition() { return partition; }

    @Override
    public void lockPartitionForPush() {
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.LOCK_PARTITION_FOR_PUSH)) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.execute();
            pushSavepoint = true;
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public Optional<StoredRow> getRow(String table, String rowId) {
        try {
            return PostgresServerStorage.getRowOn(c, storage.table(table), partition, rowId);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public Optional<StoredPushResult> getPushResult(String clientId, String clientCommitId) {
        try {
            return PostgresServerStorage.getPushResultOn(c, partition, clientId, clientCommitId);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public List<StoredRow> scanRows(RowScanQuery query) {
        try {
            return PostgresServerStorage.scanRowsOn(c, storage.table(query.table()), partition, query);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public void upsertRow(String table, StoredRow row, int opIndex) {
        RowTable t = storage.table(table);
        try (PreparedStatement ps = c.prepareStatement(t.upsertSql)) {
            t.bindUpsert(ps, partition, row.rowId(), row.serverVersion(), StoredJson.scopes(row.scopes()),
                    row.scopes(), row.payload());
            ps.executeQuery().close();
        } catch (SQLException e) {
            throw PgErrors.classifyRowWrite(e, opIndex);
        }
    }

    @Override
    public void deleteRow(String table, String rowId) {
        RowTable t = storage.table(table);
        try (PreparedStatement ps = c.prepareStatement(t.deleteSql)) {
            int i = 1;
            ps.setString(i++, partition);
            ps.setString(i++, rowId);
            for (int k = 0; k < 2; k++) {
                ps.setString(i++, partition);
                ps.setString(i++, table);
                ps.setString(i++, rowId);
            }
            ps.executeQuery().close();
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public long appendCommit(NewCommit commit) {
        int n = commit.changes().size();
        Integer[] idx = new Integer[n];
        String[] tbl = new String[n];
        String[] rowId = new String[n];
        Short[] op = new Short[n];
        Long[] rowVersion = new Long[n];
        String[] scopes = new String[n];
        byte[][] payload = new byte[n][];
        // SPEC §3.1: the commit → scope inverted index; one entry per (table, var, value) of the commit
        Set<List<String>> scopeKeys = new LinkedHashSet<>();
        for (int k = 0; k < n; k++) {
            StoredChange ch = commit.changes().get(k);
            idx[k] = k;
            tbl[k] = ch.table();
            rowId[k] = ch.rowId();
            op[k] = (short) ch.op().code();
            rowVersion[k] = ch.rowVersion();
            scopes[k] = StoredJson.scopes(ch.scopes());
            payload[k] = ch.payload();
            for (Map.Entry<String, String> e : ch.scopes().entrySet()) {
                scopeKeys.add(List.of(ch.table(), e.getKey(), e.getValue()));
            }
        }
        String[] sTbl = new String[scopeKeys.size()];
        String[] sVar = new String[scopeKeys.size()];
        String[] sVal = new String[scopeKeys.size()];
        int k = 0;
        for (List<String> key : scopeKeys) {
            sTbl[k] = key.get(0);
            sVar[k] = key.get(1);
            sVal[k] = key.get(2);
            k++;
        }
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.APPEND_COMMIT)) {
            int i = 1;
            ps.setString(i++, partition);
            ps.setString(i++, partition);
            ps.setString(i++, commit.clientId());
            ps.setString(i++, commit.clientCommitId());
            ps.setString(i++, commit.actorId());
            ps.setLong(i++, commit.createdAtMs());
            ps.setLong(i++, writerVersion);
            ps.setString(i++, partition);
            ps.setArray(i++, c.createArrayOf("int4", idx));
            ps.setArray(i++, c.createArrayOf("text", tbl));
            ps.setArray(i++, c.createArrayOf("text", rowId));
            ps.setArray(i++, c.createArrayOf("int2", op));
            ps.setArray(i++, c.createArrayOf("int8", rowVersion));
            ps.setArray(i++, c.createArrayOf("text", scopes));
            ps.setArray(i++, c.createArrayOf("bytea", payload));
            ps.setString(i++, partition);
            ps.setArray(i++, c.createArrayOf("text", sTbl));
            ps.setArray(i++, c.createArrayOf("text", sVar));
            ps.setArray(i++, c.createArrayOf("text", sVal));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public void putPushResult(String clientId, String clientCommitId, StoredPushResult result) {
        try {
            PostgresServerStorage.putPushResultOn(c, partition, clientId, clientCommitId, result);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public void rejectPush(String clientId, String clientCommitId, StoredPushResult rejected) {
        if (!pushSavepoint) throw new IllegalStateException("a push rejection requires lockPartitionForPush() first");
        if (rejected.status() != StoredPushResult.Status.REJECTED) {
            throw new IllegalArgumentException("rejectPush stores a rejected result");
        }
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.ROLLBACK_TO_PUSH_SAVEPOINT)) {
            ps.execute();
            pushSavepoint = false;
            PostgresServerStorage.putPushResultOn(c, partition, clientId, clientCommitId, rejected);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public boolean advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        try {
            return PostgresServerStorage.advanceCheckpointOn(c, partition, name, ownerEpoch, watermark, observedRows,
                    nowMs);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public ServeGate readServeGate(int runningSchemaVersion) {
        try {
            return PostgresServerStorage.readServeGateOn(c, partition, runningSchemaVersion);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    static StorageException unknownTable(String table) {
        return new StorageException(StorageErrorCode.SCHEMA_CHANGED, Map.of("table", table));
    }
}

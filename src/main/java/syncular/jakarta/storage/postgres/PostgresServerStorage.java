package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.ClientCursorInfo;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.CommitPruneResult;
import syncular.jakarta.storage.CommitWindow;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.PendingCheckpoint;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.SourceCoverage;
import syncular.jakarta.storage.SqlWork;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.storage.ColumnVersions;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.StagedWritesRefused;
import syncular.jakarta.storage.TransactionRunner;

/**
 * PostgreSQL {@link ServerStorage} (seeds/003 {@code PostgresServerStorage}, 0.15.48 for what is unchanged).
 *
 * <p>No scan-before-LIMIT, ever: both the commit log and the current rows carry a (table, var, value) inverted scope
 * index whose primary key is covering for its candidate selection, so a pull reads an index range already ordered
 * by commit_seq or row id, and verifies the full multi-variable match in Java ({@code PostgresExplainTest}).
 *
 * <p>commitSeq is a dense, gap-free per-partition counter allocated inside the appending transaction under the
 * partition row's lock; a rollback leaves no gap. Different partitions never contend. Thread-safe; the schema memo
 * is per instance and version.
 */
public final class PostgresServerStorage implements ServerStorage {
    private static final System.Logger LOG = System.getLogger(PostgresServerStorage.class.getName());

    private final DataSource dataSource;
    private final TransactionRunner runner;
    private final SchemaInstaller installer;
    /** Set by ensureSchema: the running schema's tables and version (the writer version); version 0 before. */
    private volatile Installed installed = new Installed(0, Map.of(), false);

    private record Installed(int version, Map<String, RowTable> tables, boolean ensured) { }

    @FunctionalInterface
    interface SqlRead<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * @param dataSource reads run on connections of their own from here
     * @param runner     units that need their own transaction run through it (JDBC or JTA)
     * @param clock      milliseconds, for the times a migration stamps on installed checkpoints
     */
    public PostgresServerStorage(DataSource dataSource, TransactionRunner runner, LongSupplier clock) {
        this(dataSource, runner, clock, DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_TOUCH_INTERVAL_MS);
    }

    /** The default of {@code syncular.limits.partition-touch-interval-ms}. */
    public static final long DEFAULT_TOUCH_INTERVAL_MS = 1_000;

    /** The default of {@code syncular.limits.lock-timeout-ms}. */
    public static final long DEFAULT_LOCK_TIMEOUT_MS = 5_000;

    /**
     * @param lockTimeoutMs how long a push transaction waits for its partition lock before it fails with
     *                      {@link syncular.jakarta.storage.StorageErrorCode#LOCK_NOT_AVAILABLE} (issue 13: a waiting
     *                      push holds a pooled connection, so the wait must end)
     * @param touchIntervalMs how stale a partition's registry activity time may get before a request rewrites it
     *                      (0: every request does, as the reference)
     */
    public PostgresServerStorage(DataSource dataSource, TransactionRunner runner, LongSupplier clock,
                                 long lockTimeoutMs, long touchIntervalMs) {
        if (lockTimeoutMs < 1) throw new IllegalArgumentException("lockTimeoutMs must be at least 1");
        if (touchIntervalMs < 0) throw new IllegalArgumentException("touchIntervalMs must be 0 or more");
        this.touchIntervalMs = touchIntervalMs;
        this.dataSource = dataSource;
        this.runner = runner;
        this.installer = new SchemaInstaller(dataSource, runner, clock);
        this.lockForPushSql = "SET LOCAL lock_timeout = " + lockTimeoutMs + ";\n" + CommitLogSql.LOCK_PARTITION_FOR_PUSH;
        this.yieldingLockTimeoutSql = "SELECT set_config('lock_timeout', greatest(1, least(" + lockTimeoutMs
                + ", floor(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 250)))::bigint::text,"
                + " true)";
    }

    /**
     * The lock timeout of a transaction that takes row locks before the partition lock
     * ({@link syncular.jakarta.storage.StorageTransaction#lockRowsForPush}): the push's, at most a quarter of the
     * server's {@code deadlock_timeout}, so that in a cycle with a push it gives up before PostgreSQL's deadlock
     * check runs (the check fails the waiter whose timer fires, which would be the push). Transaction-local.
     */
    final String yieldingLockTimeoutSql;

    /** The push lock with this storage's lock timeout in front of it: still one round trip. */
    final String lockForPushSql;
    private final long touchIntervalMs;

    // ------------------------------------------------------------------ schema

    /**
     * The storage DDL alone, the backfill pass table included (idempotent; {@link #ensureSchema} runs it too), so
     * the declaration reads work before the first {@code ensureSchema} on an empty database.
     */
    public void migrate() {
        installer.migrateBase();
        read(c -> {
            try (java.sql.Statement s = c.createStatement()) {
                s.execute(BackfillSql.CREATE_TABLE);
            } catch (SQLException e) {
                // two nodes racing CREATE TABLE IF NOT EXISTS can collide on the catalog; the other one made it
                if (!PgErrors.lostCreateRace(e)) throw e;
            }
            return null;
        });
    }

    @Override
    public synchronized void ensureSchema(CompiledSchema schema, List<CheckpointDeclaration> declarations) {
        if (installed.ensured && installed.version == schema.version()) return;   // memoized per instance and version
        migrate();
        installer.ensure(schema, declarations);
        Map<String, RowTable> tables = new LinkedHashMap<>();
        for (TableSchema t : schema.tables()) tables.put(t.name(), new RowTable(t));
        installed = new Installed(schema.version(), Map.copyOf(tables), true);
    }

    @Override
    public int writerVersion() { return installed.version; }

    /** Schema migrations this instance committed (0 when another node did the work). */
    int migrationsApplied() { return installer.migrationsApplied(); }

    /** The running schema's tables by name (for the validators' authoritative query). */
    Map<String, RowTable> installedTables() { return installed.tables; }

    RowTable table(String name) {
        RowTable t = installed.tables.get(name);
        if (t == null) throw PostgresTransaction.unknownTable(name);
        return t;
    }

    // --------------------------------------------------------------- partitions

    /**
     * The registry touch; a partition seen for the first time after a migration that declared checkpoints for the
     * running version gets its writer fence raised to that version in the same statement (RFC 0007: the migration
     * fenced every partition it knew; one first seen later must not be open to an old writer). {@code xmax = 0}
     * marks the row this statement inserted rather than updated. Without such a migration nothing is fenced
     * (pre-RFC behaviour).
     *
     * <p>The activity time is written only when it is older than the touch interval (or ahead of the clock): every
     * request of a partition touches the same row, and writing it each time made that row a hot spot every request
     * queued on (issue 14). A fresh row is only read; the insert of an absent or stale one is {@code ON CONFLICT}
     * safe against a concurrent first touch. Params: see {@link #bindTouch}.
     */
    static final String TOUCH_PARTITION = """
            WITH current AS (
              SELECT log_epoch, epoch_required, last_authenticated_at_ms FROM sync_partition_registry
               WHERE partition = ?
            ), touched AS (
              INSERT INTO sync_partition_registry(partition, log_epoch, last_authenticated_at_ms)
              SELECT ?, ?, ?
               WHERE NOT EXISTS (SELECT 1 FROM current
                                  WHERE last_authenticated_at_ms <= ? AND last_authenticated_at_ms > ? - ?)
              ON CONFLICT (partition) DO UPDATE SET last_authenticated_at_ms = EXCLUDED.last_authenticated_at_ms
              RETURNING partition, log_epoch, epoch_required, last_authenticated_at_ms, (xmax = 0) AS inserted
            ), fenced AS (
              INSERT INTO sync_writer_fence(partition, required_writer_version)
              SELECT t.partition, ? FROM touched t
               WHERE t.inserted AND ? > 0
                 AND EXISTS (SELECT 1 FROM sync_backfill_checkpoints c WHERE c.schema_version = ?)
              ON CONFLICT (partition) DO UPDATE
                SET required_writer_version = GREATEST(sync_writer_fence.required_writer_version,
                                                       EXCLUDED.required_writer_version)
            )
            SELECT log_epoch, epoch_required, last_authenticated_at_ms FROM touched
            UNION ALL
            SELECT log_epoch, epoch_required, last_authenticated_at_ms FROM current
             WHERE NOT EXISTS (SELECT 1 FROM touched)""";

    /** Binds {@link #TOUCH_PARTITION} from {@code i}; returns the next index. */
    int bindTouch(PreparedStatement ps, int i, String partition, long authenticatedAtMs, String initialLogEpoch)
            throws SQLException {
        if (initialLogEpoch.isEmpty()) throw new IllegalArgumentException("initial log epoch must be non-empty");
        ps.setString(i++, partition);
        ps.setString(i++, partition);
        ps.setString(i++, initialLogEpoch);
        ps.setLong(i++, authenticatedAtMs);
        ps.setLong(i++, authenticatedAtMs);
        ps.setLong(i++, authenticatedAtMs);
        ps.setLong(i++, touchIntervalMs);
        int running = writerVersion();
        ps.setInt(i++, running);
        ps.setInt(i++, running);
        ps.setInt(i++, running);
        return i;
    }

    static PartitionRegistryEntry registryFrom(String partition, ResultSet rs) throws SQLException {
        rs.next();
        return new PartitionRegistryEntry(partition, rs.getString(1), rs.getBoolean(2), rs.getLong(3));
    }

    /** The rotation, and its notice to every node's commit feed (delivered at commit): the log may have rewound. */
    static final String ROTATE_EPOCH = """
            INSERT INTO sync_partition_registry(partition, log_epoch, epoch_required, last_authenticated_at_ms)
            VALUES (?, ?, TRUE, ?)
            ON CONFLICT (partition) DO UPDATE SET log_epoch = EXCLUDED.log_epoch, epoch_required = TRUE,
                                                  last_authenticated_at_ms = EXCLUDED.last_authenticated_at_ms;
            DELETE FROM sync_clients WHERE partition = ?;
            """ + "SELECT pg_notify('" + PostgresCommitFeed.CHANNEL + "', ? || '" + PostgresCommitFeed.REWOUND + "')";

    @Override
    public PartitionRegistryEntry touchPartition(String partition, long authenticatedAtMs, String initialLogEpoch) {
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(TOUCH_PARTITION)) {
                bindTouch(ps, 1, partition, authenticatedAtMs, initialLogEpoch);
                try (ResultSet rs = ps.executeQuery()) {
                    return registryFrom(partition, rs);
                }
            }
        });
    }

    @Override
    public PartitionRegistryEntry rotatePartitionLogEpoch(String partition, String logEpoch, long authenticatedAtMs) {
        if (logEpoch.isEmpty()) throw new IllegalArgumentException("log epoch must be non-empty");
        return write(c -> {
            try (PreparedStatement ps = c.prepareStatement(ROTATE_EPOCH)) {
                ps.setString(1, partition);
                ps.setString(2, logEpoch);
                ps.setLong(3, authenticatedAtMs);
                ps.setString(4, partition);
                ps.setString(5, partition);
                ps.execute();
            }
            return new PartitionRegistryEntry(partition, logEpoch, true, authenticatedAtMs);
        });
    }

    @Override
    public List<PartitionRegistryEntry> listPartitionRegistry() {
        return read(c -> {
            List<PartitionRegistryEntry> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT partition, log_epoch, epoch_required, "
                    + "last_authenticated_at_ms FROM sync_partition_registry ORDER BY partition");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new PartitionRegistryEntry(rs.getString(1), rs.getString(2), rs.getBoolean(3),
                            rs.getLong(4)));
                }
            }
            return out;
        });
    }

    /** §5.9.4: a page of the referencing rows, each with its scope-index entries (none: a LEFT JOIN null). */
    private static final String BLOB_REFERENCES = """
            SELECT r.tbl, r.row_id, s.var, s.value
              FROM (SELECT tbl, row_id FROM sync_blob_refs
                     WHERE partition = ? AND blob_id = ? AND (tbl, row_id) > (?, ?)
                     ORDER BY tbl, row_id LIMIT ?) r
              LEFT JOIN sync_row_scopes s ON s.partition = ? AND s.tbl = r.tbl AND s.row_id = r.row_id
             ORDER BY r.tbl, r.row_id""";
    private static final String REFERENCED_BLOBS = "SELECT DISTINCT blob_id FROM sync_blob_refs"
            + " WHERE partition = ? AND blob_id = ANY(?::text[])";

    @Override
    public List<BlobReference> blobReferences(String partition, String blobId, syncular.jakarta.storage.RowKey after,
                                              int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1");
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(BLOB_REFERENCES)) {
                ps.setString(1, partition);
                ps.setString(2, blobId);
                ps.setString(3, after == null ? "" : after.table());
                ps.setString(4, after == null ? "" : after.rowId());
                ps.setInt(5, limit);
                ps.setString(6, partition);
                List<BlobReference> out = new ArrayList<>();
                Map<String, String> scopes = null;
                String table = null;
                String rowId = null;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (!rs.getString(1).equals(table) || !rs.getString(2).equals(rowId)) {
                            if (table != null) out.add(new BlobReference(table, rowId, Map.copyOf(scopes)));
                            table = rs.getString(1);
                            rowId = rs.getString(2);
                            scopes = new LinkedHashMap<>();
                        }
                        if (rs.getString(3) != null) scopes.put(rs.getString(3), rs.getString(4));
                    }
                }
                if (table != null) out.add(new BlobReference(table, rowId, Map.copyOf(scopes)));
                return out;
            }
        });
    }

    @Override
    public java.util.Set<String> referencedBlobIds(String partition, Collection<String> blobIds) {
        java.util.Set<String> out = new java.util.HashSet<>();
        if (blobIds.isEmpty()) return out;
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(REFERENCED_BLOBS)) {
                ps.setString(1, partition);
                ps.setArray(2, c.createArrayOf("text", blobIds.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(rs.getString(1));
                }
            }
            return out;
        });
    }

    @Override
    public Optional<String> getPartitionLogEpoch(String partition) {
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT log_epoch FROM sync_partition_registry WHERE partition = ?")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
                }
            }
        });
    }

    // -------------------------------------------------------------- transactions

    /**
     * READ COMMITTED is set, never inherited from a pool's default (ARCHITECTURE), as the first statement the
     * transaction sends (it rides in that statement's round trip); PostgreSQL refuses it loudly if the caller already
     * ran a statement in this transaction, which would make the level unknowable.
     */
    @Override
    public StorageSession openSession(String partition) {
        return new PostgresSession(this, dataSource, partition);
    }

    /**
     * The storage's own unit: its writes under the push lock travel together (staged, {@link PostgresTransaction})
     * and write the partition head back once, with the staged appends (or, unstaged, here before the caller commits)
     * instead of with every commit. The work is a function of the database state only, as every unit the caller may
     * run again must be ({@link StagedWritesRefused}).
     */
    @Override
    public <T> T runUnit(Connection connection, String partition, boolean staged, TransactionWork<T> work) {
        PostgresTransaction tx = new PostgresTransaction(this, connection, partition, installed.version, staged);
        T result = work.run(tx);
        tx.finish();
        return result;
    }

    @Override
    public <T> T inTransaction(String partition, TransactionWork<T> work) {
        return StagedWritesRefused.stagedThenUnstaged(
                staged -> runner.inNewTransaction(c -> runUnit(c, partition, staged, work)));
    }

    // --------------------------------------------------------------- commit log

    @Override
    public long getMaxCommitSeq(String partition) {
        return readLong("SELECT max_commit_seq FROM sync_partitions WHERE partition = ?", partition);
    }

    @Override
    public long getHorizonSeq(String partition) {
        return readLong("SELECT horizon_seq FROM sync_partitions WHERE partition = ?", partition);
    }

    /** Params: partition, horizon (three times). */
    static final String PRUNE_DELETE = """
            DELETE FROM sync_changes WHERE partition = ? AND commit_seq <= ?;
            DELETE FROM sync_change_scopes WHERE partition = ? AND commit_seq <= ?;
            DELETE FROM sync_tombstones WHERE partition = ? AND commit_seq <= ?""";

    /**
     * Monotonic; the partition row's lock is taken by this last statement, so a prune blocks the partition's pushes
     * only from here to its commit, not while it deletes. Params: horizon, partition.
     */
    static final String RAISE_HORIZON = """
            UPDATE sync_partitions SET horizon_seq = GREATEST(horizon_seq, ?) WHERE partition = ?
            RETURNING horizon_seq""";

    @Override
    public CommitPruneResult pruneCommitsThrough(String partition, CommitPruneQuery query) {
        if (query.logEpoch() == null || query.logEpoch().isEmpty() || query.throughSeq() < 0) {
            throw new StorageException(StorageErrorCode.INVALID_PRUNE_CURSOR);
        }
        return write(c -> {
            // FOR SHARE: a concurrent epoch rotation (restore) waits for this prune, or this prune sees its epoch
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT log_epoch FROM sync_partition_registry WHERE partition = ? FOR SHARE")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) throw new StorageException(StorageErrorCode.PARTITION_UNREGISTERED);
                    if (!rs.getString(1).equals(query.logEpoch())) {
                        throw new StorageException(StorageErrorCode.PRUNE_EPOCH_MISMATCH);
                    }
                }
            }
            long previous;
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT COALESCE((SELECT horizon_seq FROM sync_partitions WHERE partition = ?), 0)")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    previous = rs.getLong(1);
                }
            }
            // a concurrent prune may raise the horizon meanwhile: deletes are idempotent and the raise is GREATEST
            long target = Math.max(previous, query.throughSeq());
            long removed;
            try (PreparedStatement ps = c.prepareStatement(
                    "DELETE FROM sync_commits WHERE partition = ? AND commit_seq <= ?")) {
                ps.setString(1, partition);
                ps.setLong(2, target);
                removed = ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(PRUNE_DELETE)) {
                for (int i = 0; i < 3; i++) {
                    ps.setString(2 * i + 1, partition);
                    ps.setLong(2 * i + 2, target);
                }
                ps.execute();
            }
            long horizon = target;
            try (PreparedStatement ps = c.prepareStatement(CommitLogSql.LOCK_PARTITION_INSERT + ";\n"
                    + RAISE_HORIZON)) {
                ps.setString(1, partition);
                ps.setLong(2, target);
                ps.setString(3, partition);
                boolean isResultSet = ps.execute();
                while (!isResultSet && ps.getUpdateCount() != -1) isResultSet = ps.getMoreResults();
                if (isResultSet) {
                    try (ResultSet rs = ps.getResultSet()) {
                        if (rs.next()) horizon = rs.getLong(1);
                    }
                }
            }
            return new CommitPruneResult(previous, horizon, removed);
        });
    }

    @Override
    public long getCommitSeqBefore(String partition, long createdBeforeMs) {
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(max(commit_seq), 0) FROM sync_commits "
                    + "WHERE partition = ? AND created_at_ms < ?")) {
                ps.setString(1, partition);
                ps.setLong(2, createdBeforeMs);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    /**
     * The commit-window pages of {@link #readCommitWindow} on {@code c}. The page statement is planned for its
     * parameters on every call ({@link CommitLogSql#COMMIT_WINDOW_PAGE_THEN_HORIZON}). With {@code end}, the first
     * page carries the request's end ({@link CommitLogSql#COMMIT_WINDOW_PAGE_RECORDING_THEN_GATE}, or
     * {@link CommitLogSql#COMMIT_WINDOW_PAGE_THEN_GATE} when {@code end.record} is empty: an equal record is stored);
     * the record's guard is evaluated here on the rows the statement returned, as the statement evaluated it.
     */
    static CommitWindow readCommitWindowOn(Connection c, String partition, CommitWindowQuery query,
                                           Optional<WindowEnd> end) throws SQLException {
        if (query.scopes().isEmpty()) throw new StorageException(StorageErrorCode.SCAN_REQUIRES_SCOPE);
        Map.Entry<String, List<String>> first = query.scopes().values().entrySet().iterator().next();
        if (first.getValue().isEmpty()) return new CommitWindow(List.of(), -1);
        List<StoredCommit> commits = new ArrayList<>();
        long afterSeq = query.afterSeq();
        long horizon = 0;
        int delivered = 0;
        int batch = Math.max(64, query.limitChanges());
        Optional<ServeGate> endGate = Optional.empty();
        for (int page = 0; delivered < query.limitChanges(); page++) {
            Optional<WindowEnd> riding = page == 0 ? end : Optional.empty();
            String sql = riding.isEmpty() ? CommitLogSql.COMMIT_WINDOW_PAGE_THEN_HORIZON
                    : riding.get().record().isPresent() ? CommitLogSql.COMMIT_WINDOW_PAGE_RECORDING_THEN_GATE
                    : CommitLogSql.COMMIT_WINDOW_PAGE_THEN_GATE;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int i = 1;
                ps.setString(i++, partition);
                ps.setString(i++, query.table());
                ps.setString(i++, first.getKey());
                TextArrays.bind(ps, i++, first.getValue());
                ps.setLong(i++, afterSeq);
                ps.setLong(i++, query.throughSeq());
                ps.setInt(i++, batch);
                ps.setString(i++, partition);
                ps.setString(i++, partition);
                ps.setString(i++, query.table());
                if (riding.isPresent() && riding.get().record().isPresent()) {
                    i = bindClientRecord(ps, i, partition, riding.get().record().get());
                    ps.setInt(i++, batch);
                    ps.setInt(i++, query.limitChanges() - 1);
                }
                ps.setString(i++, partition);
                if (riding.isPresent()) {
                    ps.setString(i++, partition);
                    ps.setInt(i++, riding.get().runningSchemaVersion());
                }
                int candidates = 0;
                int tableRows = 0;
                boolean full = false;
                if (!ps.execute()) throw new SQLException("the commit window read returned no rows");
                try (ResultSet rs = ps.getResultSet()) {
                    long current = -1;
                    String actor = null;
                    long createdAt = 0;
                    List<StoredChange> changes = new ArrayList<>();
                    while (rs.next()) {
                        long seq = rs.getLong(1);
                        if (seq != current) {
                            if (current >= 0 && actor != null && !changes.isEmpty()) {
                                commits.add(new StoredCommit(current, createdAt, actor, changes));
                                delivered += changes.size();
                                if (delivered >= query.limitChanges()) {
                                    full = true;
                                    break;
                                }
                            }
                            // every candidate advances the cursor, vanished commits included (LEFT JOIN)
                            candidates++;
                            current = seq;
                            afterSeq = seq;
                            actor = rs.getString(2);
                            createdAt = rs.getLong(3);
                            changes = new ArrayList<>();
                        }
                        String tbl = rs.getString(4);
                        if (tbl == null) continue;
                        tableRows++;
                        StoredChange ch = change(rs, tbl);
                        if (query.scopes().matches(ch.scopes())) changes.add(ch);
                    }
                    if (!full && current >= 0 && actor != null && !changes.isEmpty()) {
                        commits.add(new StoredCommit(current, createdAt, actor, changes));
                        delivered += changes.size();
                        full = delivered >= query.limitChanges();
                    }
                }
                if (ps.getMoreResults()) {
                    try (ResultSet rs = ps.getResultSet()) {
                        if (rs.next()) horizon = Math.max(horizon, rs.getLong(1));
                    }
                }
                if (riding.isPresent()) {
                    if (!ps.getMoreResults()) throw new SQLException("the serve-gate read returned no rows");
                    try (ResultSet rs = ps.getResultSet()) {
                        // the statement's guard, on the rows it returned (a full page stopped reading them: not
                        // stored); it also means this page is the window's last, so no read follows the gate
                        if (!full && candidates < batch && tableRows <= query.limitChanges() - 1) {
                            endGate = Optional.of(serveGateFrom(rs));
                        }
                    }
                }
                if (full || candidates < batch) break;
            }
        }
        return new CommitWindow(commits, horizon, endGate);
    }

    /**
     * A {@link syncular.jakarta.storage.RequestEnd} as the window read carries it: the record to store if the window
     * is complete, empty when an equal one is stored already (the touch-interval rule), and the gate's version.
     */
    record WindowEnd(Optional<ClientRecord> record, int runningSchemaVersion) { }

    private static StoredChange change(ResultSet rs, String tbl) throws SQLException {
        long rv = rs.getLong(7);
        Long rowVersion = rs.wasNull() ? null : rv;
        return new StoredChange(tbl, rs.getString(5), ChangeOp.forCode(rs.getShort(6)), rowVersion,
                StoredJson.parseScopes(rs.getString(8)), rs.getBytes(9));
    }

    // -------------------------------------------------------------------- rows

    /** A row from the columns row id, version, scopes, payload (a scan: no column versions). */
    static StoredRow rowFrom(ResultSet rs) throws SQLException {
        return new StoredRow(rs.getString(1), rs.getLong(2), StoredJson.parseScopes(rs.getString(3)), rs.getBytes(4));
    }

    /** A row from {@code RowTable.selectRowSql}'s columns: {@link #rowFrom}'s and the column versions. */
    static StoredRow versionedRowFrom(ResultSet rs) throws SQLException {
        return new StoredRow(rs.getString(1), rs.getLong(2), StoredJson.parseScopes(rs.getString(3)), rs.getBytes(4),
                ColumnVersions.fromBytes(rs.getBytes(5)));
    }

    static List<StoredRow> scanRowsOn(Connection c, RowTable t, String partition, RowScanQuery query)
            throws SQLException {
        if (query.scopes().isEmpty()) throw new StorageException(StorageErrorCode.SCAN_REQUIRES_SCOPE);
        Map.Entry<String, List<String>> first = query.scopes().values().entrySet().iterator().next();
        List<StoredRow> rows = new ArrayList<>();
        if (first.getValue().isEmpty()) return rows;
        String after = query.afterRowId() == null ? "" : query.afterRowId();
        int batch = Math.max(64, query.limit());
        boolean oneValue = first.getValue().size() == 1;
        try (PreparedStatement ps = c.prepareStatement(oneValue ? t.scanPageOneValueSql : t.scanPageSql)) {
            while (rows.size() < query.limit()) {
                ps.setString(1, partition);
                ps.setString(2, t.schema.name());
                ps.setString(3, first.getKey());
                if (oneValue) {
                    ps.setString(4, first.getValue().get(0));
                } else {
                    TextArrays.bind(ps, 4, first.getValue());
                }
                ps.setString(5, after);
                ps.setInt(6, batch);
                ps.setString(7, partition);
                int n = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        n++;
                        after = rs.getString(1);
                        byte[] payload = rs.getBytes(4);
                        if (payload == null) continue;   // a candidate whose row vanished only moves the cursor
                        StoredRow row = new StoredRow(after, rs.getLong(2), StoredJson.parseScopes(rs.getString(3)),
                                payload);
                        if (!query.scopes().matches(row.scopes())) continue;
                        rows.add(row);
                        if (rows.size() >= query.limit()) break;
                    }
                }
                if (n < batch) break;
            }
        }
        return rows;
    }

    // ---------------------------------------------------------- idempotency, clients

    @Override
    public Optional<ClientRecord> getClientRecord(String partition, String clientId) {
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(GET_CLIENT_RECORD)) {
                ps.setString(1, partition);
                ps.setString(2, clientId);
                try (ResultSet rs = ps.executeQuery()) {
                    return clientRecordFrom(rs);
                }
            }
        });
    }

    static final String GET_CLIENT_RECORD = "SELECT client_id, actor_id, wire_version, cursor, updated_at_ms, "
            + "subscriptions::text FROM sync_clients WHERE partition = ? AND client_id = ?";

    static Optional<ClientRecord> clientRecordFrom(ResultSet rs) throws SQLException {
        return rs.next() ? clientRecordOf(rs) : Optional.empty();
    }

    /** The client record in the current row's first six columns ({@link #GET_CLIENT_RECORD}'s), none if null. */
    static Optional<ClientRecord> clientRecordOf(ResultSet rs) throws SQLException {
        String clientId = rs.getString(1);
        if (clientId == null) return Optional.empty();
        return Optional.of(new ClientRecord(clientId, rs.getString(2), rs.getInt(3), rs.getLong(4),
                rs.getLong(5), StoredJson.parseSubscriptions(rs.getString(6))));
    }

    /**
     * A client record's upsert around its row source ({@link #bindClientRecord}'s seven values). A stored record is
     * only ever updated for its own actor (§1.5: a clientId stays bound to the actor that first stored it): two
     * actors' first requests with one new clientId both pass validation (neither read a record), and the later
     * write used to rebind the client to its actor; now it leaves the first binding as it is, and that actor's
     * next request is refused as any other.
     */
    static String putClientRecord(String values) {
        return """
                INSERT INTO sync_clients(partition, client_id, actor_id, wire_version, cursor, subscriptions,
                                         updated_at_ms)
                """ + values + """

                ON CONFLICT (partition, client_id) DO UPDATE
                  SET wire_version = EXCLUDED.wire_version, cursor = EXCLUDED.cursor,
                      subscriptions = EXCLUDED.subscriptions, updated_at_ms = EXCLUDED.updated_at_ms
                  WHERE sync_clients.actor_id = EXCLUDED.actor_id""";
    }

    static final String PUT_CLIENT_RECORD = putClientRecord("VALUES (?, ?, ?, ?, ?, ?::jsonb, ?)");

    /**
     * Whether a request's client record differs from the one its preamble read ({@code stored}) only by an activity
     * time less than the touch interval later: then the write is left out, as the partition registry's touch is
     * (a client pulling every few milliseconds otherwise rewrote its row each time). Its activity time then lags by
     * less than the interval; retention reads it against an active window of days.
     */
    boolean unchangedWithinTouchInterval(Optional<ClientRecord> stored, ClientRecord next) {
        if (stored.isEmpty()) return false;
        ClientRecord s = stored.get();
        long age = next.updatedAtMs() - s.updatedAtMs();
        return age >= 0 && age < touchIntervalMs && s.equals(new ClientRecord(next.clientId(), next.actorId(),
                next.wireVersion(), next.cursor(), s.updatedAtMs(), next.subscriptions()));
    }

    static int bindClientRecord(PreparedStatement ps, int i, String partition, ClientRecord r) throws SQLException {
        ps.setString(i++, partition);
        ps.setString(i++, r.clientId());
        ps.setString(i++, r.actorId());
        ps.setInt(i++, r.wireVersion());
        ps.setLong(i++, r.cursor());
        ps.setString(i++, StoredJson.subscriptions(r.subscriptions()));
        ps.setLong(i++, r.updatedAtMs());
        return i;
    }

    @Override
    public void putClientRecord(String partition, ClientRecord r) {
        read(c -> {
            try (PreparedStatement ps = c.prepareStatement(PUT_CLIENT_RECORD)) {
                bindClientRecord(ps, 1, partition, r);
                ps.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public List<ClientCursorInfo> listClientCursors(String partition) {
        return read(c -> {
            List<ClientCursorInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT client_id, cursor, updated_at_ms FROM sync_clients "
                    + "WHERE partition = ? ORDER BY client_id")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(new ClientCursorInfo(rs.getString(1), rs.getLong(2), rs.getLong(3)));
                }
            }
            return out;
        });
    }

    // ---------------------------------------------------------------- RFC 0007

    @Override
    public ServeGate readServeGate(String partition, int runningSchemaVersion) {
        return read(c -> readServeGateOn(c, partition, runningSchemaVersion));
    }

    static ServeGate readServeGateOn(Connection c, String partition, int runningSchemaVersion) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.READ_SERVE_GATE)) {
            ps.setString(1, partition);
            ps.setInt(2, runningSchemaVersion);
            try (ResultSet rs = ps.executeQuery()) {
                return serveGateFrom(rs);
            }
        }
    }

    /** The token from {@link CommitLogSql#READ_SERVE_GATE}'s rows. */
    static ServeGate serveGateFrom(ResultSet rs) throws SQLException {
        int stored = 0;
        String epoch = null;
        List<PendingCheckpoint> pending = new ArrayList<>();
        while (rs.next()) {
            switch (rs.getString(1)) {
                case "e" -> epoch = rs.getString(2);
                case "m" -> stored = Integer.parseInt(rs.getString(2));
                default -> pending.add(new PendingCheckpoint(rs.getString(2), rs.getString(3)));
            }
        }
        return new ServeGate(stored, epoch, pending);
    }

    static void installCheckpointOn(Connection c, String partition, String name, int schemaVersion, long nowMs)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.INSTALL_CHECKPOINT + ";\n"
                + CommitLogSql.RAISE_FENCE)) {
            ps.setString(1, partition);
            ps.setString(2, name);
            ps.setInt(3, schemaVersion);
            ps.setLong(4, nowMs);
            ps.setString(5, partition);
            ps.setInt(6, schemaVersion);
            ps.execute();
        }
    }

    @Override
    public List<PendingCheckpoint> pendingCheckpoints(int schemaVersion, Collection<String> names) {
        return read(c -> BackfillSql.pendingOn(c, schemaVersion, names));
    }

    @Override
    public List<String> knownPartitions() { return read(BackfillSql::knownPartitionsOn); }

    @Override
    public int raiseRegistryFences(int version) { return read(c -> BackfillSql.raiseRegistryFencesOn(c, version)); }

    @Override
    public List<BackfillPass.Progress> backfillProgress() { return read(BackfillSql::progressOn); }

    @Override
    public boolean setCheckpointPaused(String partition, String name, Long pausedAtMs) {
        return read(c -> BackfillSql.setPausedOn(c, partition, name, pausedAtMs));
    }

    @Override
    public long countSourceRows(String partition, Collection<String> tables) {
        List<RowTable> t = tables.stream().map(this::table).toList();
        return read(c -> BackfillSql.countSourceRowsOn(c, t, partition));
    }

    @Override
    public long countChanges(String partition, Collection<String> tables, long fromSeq, long throughSeq) {
        return read(c -> BackfillSql.countChangesOn(c, partition, tables, fromSeq, throughSeq));
    }

    /**
     * {@code ANALYZE} of the tables, of {@code sync_row_scopes} and (when one of them references blobs) of
     * {@code sync_blob_refs}. Why: every row write replaces the row's scope entries by {@code (partition, tbl,
     * row_id)}, which {@code sync_row_scopes_by_row} serves as one index range per row; the primary key
     * {@code (partition, tbl, var, value, row_id)} also matches the {@code (partition, tbl)} prefix, and while the
     * statistics know nothing of a table's scope entries (a new projection, a table analyzed before it filled) the
     * planner estimates that prefix at a row or two and prefers the single primary-key descent to one descent per
     * row id. That plan reads the table's whole scope range on every statement: a 64-row backfill batch read 2,100
     * buffers and took 28 ms at 140,000 projected rows, and the pass slowed from 5,436 to 1,874 rows/s within 40 s;
     * after one ANALYZE it ran at 9,500-12,500 rows/s (docs/benchmarks.md). Autovacuum analyzes only after a tenth of
     * the whole scope index changed, too late for a projection that is small beside it. The lock timeout keeps a
     * concurrent ANALYZE or VACUUM (which conflict with it) from holding the caller; without the privilege
     * PostgreSQL skips a table with a warning, not an error.
     */
    @Override
    public void refreshPlannerStatistics(Collection<String> tables) {
        if (tables.isEmpty()) return;
        // the shared index tables first: the ones an autovacuum most likely holds, so a refresh that must give up
        // does so before it analyzed anything
        List<String> targets = new ArrayList<>(List.of("sync_row_scopes"));
        List<String> own = new ArrayList<>();
        for (String name : new java.util.TreeSet<>(tables)) {
            RowTable t = installed.tables.get(name);
            if (t == null) continue;   // not a table of the running schema: nothing of it to plan
            own.add(t.quoted);
            if (t.referencesBlobs() && !targets.contains("sync_blob_refs")) targets.add("sync_blob_refs");
        }
        targets.addAll(own);
        String sql = "ANALYZE " + String.join(", ", targets);
        long started = System.nanoTime();
        try {
            write(c -> {
                SchemaInstaller.exec(c, "SET LOCAL lock_timeout = '" + STATISTICS_LOCK_TIMEOUT_MS + "ms'");
                SchemaInstaller.exec(c, sql);
                return null;
            });
            LOG.log(System.Logger.Level.DEBUG, "{0}: {1} ms", sql, (System.nanoTime() - started) / 1_000_000);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, "planner statistics not refreshed ({0}), the next milestone retries: {1}",
                    sql, e.toString());
        }
    }

    /** How long {@link #refreshPlannerStatistics} waits for a concurrent ANALYZE or VACUUM of the same tables. */
    static final long STATISTICS_LOCK_TIMEOUT_MS = 2_000;

    static SourceCoverage sourceChangesAboveOn(Connection c, String partition, Collection<String> tables, long seq)
            throws SQLException {
        if (tables.isEmpty()) return SourceCoverage.CLEAN;   // seeds/003: no source tables is clean, whatever the horizon
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.SOURCE_CHANGES_ABOVE)) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.setArray(3, c.createArrayOf("text", tables.toArray()));
            ps.setLong(4, seq);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long horizon = rs.getLong(1);
                if (rs.getBoolean(2)) return SourceCoverage.CHANGED;   // a change wins over the horizon (seeds/003)
                return horizon > seq ? SourceCoverage.UNVERIFIABLE : SourceCoverage.CLEAN;
            }
        }
    }

    @Override
    public ActivationOutcome activateCheckpoint(String partition, String name, long ownerEpoch, long watermark,
                                                Collection<String> sources, long nowMs) {
        return write(c -> activateOn(c, partition, name, ownerEpoch, watermark, sources, nowMs));
    }

    /** {@link #activateCheckpoint} on {@code c}, in the caller's transaction. */
    static ActivationOutcome activateOn(Connection c, String partition, String name, long ownerEpoch, long watermark,
                                        Collection<String> sources, long nowMs) throws SQLException {
        // the same partition row lock a push takes; a bare transaction would race a push (seeds/003)
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.LOCK_PARTITION)) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.execute();
        }
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.READ_FENCE_AND_CHECKPOINT)) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.setString(3, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int fence = rs.getInt(1);
                boolean noFence = rs.wasNull();
                int version = rs.getInt(2);
                boolean noCheckpoint = rs.wasNull();
                // activating without the barrier would certify a state old writers can still decay
                if (noFence || noCheckpoint || fence < version) {
                    throw new StorageException(StorageErrorCode.CHECKPOINT_FENCE_MISSING);
                }
            }
        }
        SourceCoverage coverage = sourceChangesAboveOn(c, partition, sources, watermark);
        if (coverage == SourceCoverage.CHANGED) return ActivationOutcome.STALE;
        if (coverage == SourceCoverage.UNVERIFIABLE) return ActivationOutcome.UNVERIFIABLE;
        try (PreparedStatement ps = c.prepareStatement(CommitLogSql.ACTIVATE_CHECKPOINT)) {
            ps.setLong(1, watermark);
            ps.setLong(2, nowMs);
            ps.setString(3, partition);
            ps.setString(4, name);
            ps.setLong(5, ownerEpoch);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? ActivationOutcome.ACTIVATED : ActivationOutcome.STALE;
            }
        }
    }

    // ----------------------------------------------------------------- plumbing

    private long readLong(String sql, String partition) {
        return read(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : 0L;
                }
            }
        });
    }

    /** A read (or a single autocommit statement) on a connection of its own. */
    private <T> T read(SqlRead<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    /** A unit in a new transaction of the runner, READ COMMITTED set as its first statement. */
    private <T> T write(SqlWork<T> work) {
        return runner.inNewTransaction(c -> {
            SchemaInstaller.exec(c, CommitLogSql.SET_READ_COMMITTED);
            try {
                return work.run(c);
            } catch (SQLException e) {
                throw PgErrors.classify(e);
            }
        });
    }
}

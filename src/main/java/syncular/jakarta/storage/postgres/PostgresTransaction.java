package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.LockedAppend;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.PushPreamble;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.SourceCoverage;
import syncular.jakarta.storage.StagedWritesRefused;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;

/**
 * {@link StorageTransaction} on the caller's connection (seeds/003 {@code PostgresTransaction}, minus commit and
 * rollback, which belong to the runner or the JTA container). Not thread-safe.
 *
 * <p>Round trips: while a push holds the partition lock every round trip is time no other writer of the partition
 * can use (ARCHITECTURE "Transactions, locks, time"), so statements travel together where the order allows. pgjdbc
 * sends a multi-statement text as one pipelined round trip. The isolation level rides in front of the first
 * statement.
 *
 * <p>In a staged unit ({@code ServerStorage#runUnit}, whose end the storage sees) the writes made under the push lock
 * are <em>staged</em>: kept here and sent in front of the next round trip, whatever it is, at the latest when the
 * unit finishes ({@link #finish()}) before its owner commits. A push group of N commits is
 * then three round trips (lock and reads, every write, COMMIT) instead of N + 2, and no savepoint is needed for a
 * commit whose writes all go together. They are kept as data ({@link StagedWrites}) and sent as a few multi-row
 * statements whose texts do not depend on the group: a concatenation of per-commit statements differed from group to
 * group, so no prepared statement was ever reused and PostgreSQL parsed and planned every one of them again. A staged
 * write the database refuses surfaces in a later round trip, where it cannot be told which operation it was: it throws
 * {@link StagedWritesRefused} and the unit's owner runs it again unstaged, where each write's refusal is attributed to
 * its own operation.
 */
final class PostgresTransaction implements StorageTransaction {
    private final PostgresServerStorage storage;
    private final Connection c;
    private final String partition;
    /** The schema version this transaction writes; stamped on every appended commit for the fence trigger. */
    private final int writerVersion;
    /** Writes under the lock are staged (see the class comment). */
    private final boolean stage;
    private final StagedWrites staged = new StagedWrites();
    /**
     * Under the lock: the partition's head as this transaction numbered its appends, and as last written back to the
     * partition row, which happens once: with the staged appends, or by {@link #finish()} before the owner commits.
     */
    private long head;
    private long publishedHead;
    private boolean isolationPending = true;
    /** The partition lock is held (the savepoint state below is only kept under it). */
    private boolean locked;
    /**
     * Row locks were taken before the partition lock ({@link #lockRowsForPush}): the transaction keeps its yielding
     * lock timeout for the partition lock too.
     */
    private boolean yielding;
    /** The push savepoint exists. */
    private boolean savepoint;
    /** The savepoint marks the start of the current candidate commit (else it is taken before its first write). */
    private boolean candidateSaved;

    @FunctionalInterface
    private interface Binder {
        int bind(PreparedStatement ps, int from) throws SQLException;
    }

    @FunctionalInterface
    interface ResultVisitor {
        void visit(int index, ResultSet rs) throws SQLException;
    }

    PostgresTransaction(PostgresServerStorage storage, Connection c, String partition, int writerVersion,
                        boolean stage) {
        this.storage = storage;
        this.c = c;
        this.partition = partition;
        this.writerVersion = writerVersion;
        this.stage = stage;
    }

    @Override public String partition() { return partition; }

    // ------------------------------------------------------------ statement plumbing

    /**
     * Runs {@code sql} (possibly several statements) in one round trip, preceded by the isolation level when this is
     * the transaction's first statement. {@code visitor} sees {@code sql}'s result sets in order.
     */
    private void run(String sql, Binder binder, ResultVisitor visitor) {
        boolean carried = !staged.isEmpty();
        StagedWrites.Flush flush = carried ? staged.drain(storage, partition, writerVersion) : null;
        String text = prefix() + (!carried ? sql : sql.isEmpty() ? flush.sql() : flush.sql() + ";\n" + sql);
        int skip = carried ? flush.resultSets() : 0;
        try (PreparedStatement ps = c.prepareStatement(text)) {
            int i = carried ? flush.binder().bind(ps, 1) : 1;
            if (binder != null) binder.bind(ps, i);
            resultSets(ps, (index, rs) -> {
                if (index >= skip) visitor.visit(index - skip, rs);
            });
        } catch (SQLException e) {
            StorageException classified = PgErrors.classifyOn(c, e);
            if (carried && (PgErrors.isOperationRefusal(classified.code())
                    || classified.code() == StorageErrorCode.WRITER_FENCE_REJECTED)) {
                throw new StagedWritesRefused(classified);
            }
            throw classified;
        }
    }

    /** Under the lock in a staging unit: {@code sql} waits for the next round trip (see the class comment). */
    private boolean staging() { return stage && locked; }

    /** Sends what is staged, alone; a no-op when nothing is. */
    private void flush() {
        if (!staged.isEmpty()) run("", null, IGNORE);
    }

    /**
     * Executes {@code ps} (a multi-statement text is one pipelined round trip) and shows {@code visitor} its result
     * sets in order, numbered from 0; update counts are skipped.
     */
    static void resultSets(PreparedStatement ps, ResultVisitor visitor) throws SQLException {
        int seen = -1;
        boolean isResultSet = ps.execute();
        while (true) {
            if (isResultSet) {
                try (ResultSet rs = ps.getResultSet()) {
                    visitor.visit(++seen, rs);
                }
            } else if (ps.getUpdateCount() == -1) {
                break;
            }
            isResultSet = ps.getMoreResults();
        }
    }

    private static final ResultVisitor IGNORE = (i, rs) -> { };

    /** The isolation level before a transaction's first statement. */
    private String prefix() {
        if (!isolationPending) return "";
        isolationPending = false;
        return CommitLogSql.SET_READ_COMMITTED + ";\n";
    }

    /**
     * Before a candidate commit's first write: the savepoint its rejection rolls back to, replacing the previous
     * candidate's (kept, so only one savepoint ever exists). Rides in the write's round trip.
     */
    private String candidate() {
        if (!locked || candidateSaved) return "";
        String sql = (savepoint ? CommitLogSql.RELEASE_PUSH_SAVEPOINT + ";\n" : "") + CommitLogSql.PUSH_SAVEPOINT
                + ";\n";
        savepoint = true;
        candidateSaved = true;
        return sql;
    }

    /** A write of the current candidate: its savepoint first when it has none yet. */
    private void write(String sql, Binder binder, ResultVisitor visitor) {
        run(candidate() + sql, binder, visitor);
    }

    // ------------------------------------------------------------ lock

    @Override
    public void lockPartitionForPush() {
        long[] locked = new long[1];
        run(storage.lockForPushSql, (ps, i) -> {
            ps.setString(i++, partition);
            ps.setString(i++, partition);
            return i;
        }, (index, rs) -> {
            if (rs.next()) locked[0] = rs.getLong(1);
        });
        locked(locked[0]);
    }

    /** The lock is held; {@code lockedHead} is the partition row's max_commit_seq read under it. */
    private void locked(long lockedHead) {
        if (!locked) {   // a second lock in the same transaction keeps the numbering it has
            head = lockedHead;
            publishedHead = lockedHead;
        }
        locked = true;
        savepoint = true;
        candidateSaved = true;
    }

    /**
     * The end of the storage's own unit, before its owner commits: the numbered head written back to the partition
     * row, with one commit-feed notice for the commits numbered since the last write-back, and whatever is staged,
     * in one round trip; a no-op when there is neither.
     */
    void finish() {
        flush();   // a staged append writes the head itself
        if (head == publishedHead) return;
        long seq = head;
        run(CommitLogSql.PUBLISH_HEAD, (ps, i) -> {
            ps.setLong(i++, seq);
            ps.setString(i++, partition);
            return i;
        }, IGNORE);
        publishedHead = seq;
    }

    @Override
    public void nextCandidate() {
        if (!locked) throw new IllegalStateException("nextCandidate requires lockForPush() first");
        candidateSaved = false;
    }

    @Override
    public PushPreamble lockForPush(int runningSchemaVersion, Collection<PushKey> commits,
                                    Collection<RowKey> prefetch, boolean withTombstones) {
        PushReads reads = new PushReads(storage, commits, prefetch, withTombstones, false);
        String sql = String.join(";\n", yielding ? CommitLogSql.LOCK_PARTITION_FOR_PUSH : storage.lockForPushSql,
                CommitLogSql.READ_SERVE_GATE, reads.sql);
        ServeGate[] gate = new ServeGate[1];
        long[] lockedRow = new long[2];
        run(sql, (ps, i) -> reads.bind(ps, bindLockAndGate(ps, i, runningSchemaVersion), partition), (index, rs) -> {
            // result sets: 0 = the FOR UPDATE row, 1 = the gate, then the reads'
            if (index == 0 && rs.next()) {
                lockedRow[0] = rs.getLong(1);
                lockedRow[1] = rs.getLong(2);
            }
            if (index == 1) gate[0] = PostgresServerStorage.serveGateFrom(rs);
            if (index >= 2) reads.visit(index - 2, rs);
        });
        locked(lockedRow[0]);
        return new PushPreamble(gate[0], reads.existing, reads.unreadable, reads.rows, reads.tombstones, head,
                lockedRow[1]);
    }

    @Override
    public PushPreamble lockRowsForPush(Collection<PushKey> commits, Collection<RowKey> rowKeys,
                                        boolean withTombstones) {
        if (locked) throw new IllegalStateException("lockRowsForPush comes before the partition lock");
        PushReads reads = new PushReads(storage, commits, rowKeys, withTombstones, true);
        run(storage.yieldingLockTimeoutSql + ";\n" + reads.sql, (ps, i) -> reads.bind(ps, i, partition),
                (index, rs) -> {
                    if (index >= 1) reads.visit(index - 1, rs);   // 0 is the timeout's
                });
        yielding = true;
        return new PushPreamble(null, reads.existing, reads.unreadable, reads.rows, reads.tombstones, 0, 0);
    }

    /**
     * What a push reads before it decides its commits, as statements of a round trip: the stored results of
     * {@code commits}, the rows of {@code rowKeys} (locked {@code FOR UPDATE} with {@code forUpdate}) and, with
     * {@code withTombstones}, which of them have a tombstone; then what the result sets said.
     */
    private static final class PushReads {
        final String sql;
        final Map<PushKey, StoredPushResult> existing = new HashMap<>();
        final Set<PushKey> unreadable = new java.util.HashSet<>();
        final Map<RowKey, StoredRow> rows = new HashMap<>();
        final Set<RowKey> tombstones = new java.util.HashSet<>();
        private final List<PushKey> pairs;
        private final Map<String, List<String>> idsByTable = new LinkedHashMap<>();
        private final List<RowTable> tables = new ArrayList<>();
        private final List<RowKey> keys;

        PushReads(PostgresServerStorage storage, Collection<PushKey> commits, Collection<RowKey> rowKeys,
                  boolean withTombstones, boolean forUpdate) {
            for (RowKey k : new LinkedHashSet<>(rowKeys)) {
                idsByTable.computeIfAbsent(k.table(), t -> new ArrayList<>()).add(k.rowId());
            }
            StringBuilder text = new StringBuilder(CommitLogSql.GET_PUSH_RESULTS_OF);
            for (String table : idsByTable.keySet()) {
                RowTable t = storage.table(table);
                tables.add(t);
                text.append(";\n").append(t.selectRowsSql).append(forUpdate ? " FOR UPDATE" : "");
            }
            keys = withTombstones ? new ArrayList<>(new LinkedHashSet<>(rowKeys)) : List.of();
            if (!keys.isEmpty()) text.append(";\n").append(CommitLogSql.TOMBSTONES_OF);
            sql = text.toString();
            pairs = List.copyOf(new LinkedHashSet<>(commits));
        }

        int bind(PreparedStatement ps, int i, String partition) throws SQLException {
            TextArrays.bind(ps, i++, pairs.stream().map(PushKey::clientId).toList());
            TextArrays.bind(ps, i++, pairs.stream().map(PushKey::clientCommitId).toList());
            ps.setString(i++, partition);
            for (RowTable t : tables) {
                ps.setString(i++, partition);
                TextArrays.bind(ps, i++, idsByTable.get(t.schema.name()));
            }
            if (!keys.isEmpty()) {
                ps.setString(i++, partition);
                TextArrays.bind(ps, i++, keys.stream().map(RowKey::table).toList());
                TextArrays.bind(ps, i++, keys.stream().map(RowKey::rowId).toList());
            }
            return i;
        }

        /** Result set {@code index} of {@link #sql}: 0 = the stored results, 1.. = rows per table, then tombstones. */
        void visit(int index, ResultSet rs) throws SQLException {
            if (index == 0) {
                while (rs.next()) {
                    PushKey key = new PushKey(rs.getString(1), rs.getString(2));
                    try {
                        existing.put(key, StoredJson.parsePushResult(rs.getString(3)));
                    } catch (StorageException e) {
                        if (e.code() != StorageErrorCode.IDEMPOTENCY_CACHE_MISS) throw e;
                        unreadable.add(key);
                    }
                }
            } else if (index == 1 + tables.size()) {
                while (rs.next()) tombstones.add(new RowKey(rs.getString(1), rs.getString(2)));
            } else {
                String table = tables.get(index - 1).schema.name();
                while (rs.next()) {
                    StoredRow row = PostgresServerStorage.versionedRowFrom(rs);
                    rows.put(new RowKey(table, row.rowId()), row);
                }
            }
        }
    }

    @Override
    public boolean writeRowsIfUnchanged(List<RowWrite> writes) {
        if (!yielding || locked) throw new IllegalStateException("writeRowsIfUnchanged follows lockRowsForPush");
        Map<String, LinkedHashMap<String, RowWrite>> byTable = new LinkedHashMap<>();
        for (RowWrite w : writes) {
            String id = w instanceof RowWrite.Upsert u ? u.row().rowId() : ((RowWrite.Delete) w).rowId();
            if (byTable.computeIfAbsent(w.table(), t -> new LinkedHashMap<>()).put(id, w) != null) {
                throw new IllegalArgumentException("rows first writes each row once: " + w.table() + " " + id);
            }
        }
        List<Statement> statements = new ArrayList<>();
        List<Integer> expected = new ArrayList<>();   // per statement: the rows its count must show, -1 for none
        for (StagedWrites.TableWrites tw : StagedWrites.byTable(storage, byTable)) {
            RowTable t = tw.table();
            // a row written at version 1 was absent at the read: inserted only (a unique violation says a push
            // inserted it since); a later version replaces the version below it
            Map<Boolean, List<StoredRow>> fresh = tw.upserts().stream()
                    .collect(java.util.stream.Collectors.partitioningBy(r -> r.serverVersion() == 1));
            if (!fresh.get(true).isEmpty()) {
                statements.add(new Statement(t.insertManySql,
                        (ps, i) -> t.bindInsertMany(ps, i, partition, fresh.get(true))));
                expected.add(fresh.get(true).size());
            }
            if (!fresh.get(false).isEmpty()) {
                statements.add(new Statement(t.upsertManyIfUnchangedSql,
                        (ps, i) -> t.bindUpsertMany(ps, i, partition, fresh.get(false))));
                expected.add(fresh.get(false).size());
            }
            if (!tw.deletes().isEmpty()) {
                // a delete is of a row the read found, so locked: it is still as read
                statements.add(new Statement(t.deleteManySql,
                        (ps, i) -> t.bindDeleteMany(ps, i, partition, tw.deletes())));
                expected.add(-1);
            }
        }
        if (statements.isEmpty()) return true;
        boolean[] unchanged = {true};
        try {
            run(statements.stream().map(Statement::sql).collect(java.util.stream.Collectors.joining(";\n")),
                    (ps, i) -> {
                        for (Statement st : statements) i = st.binder().bind(ps, i);
                        return i;
                    }, (index, rs) -> {
                        int want = expected.get(index);
                        if (want >= 0 && (!rs.next() || rs.getLong(1) != want)) unchanged[0] = false;
                    });
        } catch (StorageException e) {
            if (PgErrors.isUniqueViolation(e)) return false;
            throw e;
        }
        return unchanged[0];
    }

    // ------------------------------------------------------------ reads

    @Override
    public Optional<StoredRow> getRow(String table, String rowId) {
        RowTable t = storage.table(table);
        @SuppressWarnings("unchecked")
        Optional<StoredRow>[] out = new Optional[] {Optional.empty()};
        run(t.selectRowSql, (ps, i) -> {
            ps.setString(i++, partition);
            ps.setString(i++, rowId);
            return i;
        }, (index, rs) -> {
            if (rs.next()) out[0] = Optional.of(PostgresServerStorage.versionedRowFrom(rs));
        });
        return out[0];
    }

    @Override
    public boolean hasTombstone(String table, String rowId) {
        boolean[] out = new boolean[1];
        run(CommitLogSql.TOMBSTONES_OF, (ps, i) -> {
            ps.setString(i++, partition);
            TextArrays.bind(ps, i++, List.of(table));
            TextArrays.bind(ps, i++, List.of(rowId));
            return i;
        }, (index, rs) -> out[0] = rs.next());
        return out[0];
    }

    @Override
    public List<StoredRow> getRows(String table, Collection<String> rowIds) {
        RowTable t = storage.table(table);
        List<StoredRow> out = new ArrayList<>();
        if (rowIds.isEmpty()) return out;
        run(t.selectRowsSql, (ps, i) -> {
            ps.setString(i++, partition);
            TextArrays.bind(ps, i++, rowIds);
            return i;
        }, (index, rs) -> {
            while (rs.next()) out.add(PostgresServerStorage.versionedRowFrom(rs));
        });
        return out;
    }

    @Override
    public Optional<StoredPushResult> getPushResult(String clientId, String clientCommitId) {
        @SuppressWarnings("unchecked")
        Optional<StoredPushResult>[] out = new Optional[] {Optional.empty()};
        run(CommitLogSql.GET_PUSH_RESULT, (ps, i) -> {
            ps.setString(i++, partition);
            ps.setString(i++, clientId);
            ps.setString(i++, clientCommitId);
            return i;
        }, (index, rs) -> {
            if (rs.next()) out[0] = Optional.of(StoredJson.parsePushResult(rs.getString(1)));
        });
        return out[0];
    }

    @Override
    public List<StoredRow> scanRows(RowScanQuery query) {
        RowTable t = storage.table(query.table());
        return on(c -> PostgresServerStorage.scanRowsOn(c, t, partition, query));
    }

    @Override
    public List<StoredRow> scanRowsByReference(String childTable, String column, String parentRowId,
                                               String afterRowId, int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1");
        java.util.Objects.requireNonNull(parentRowId, "parentRowId");
        RowTable.ReferenceScan scan = storage.table(childTable).referenceScan(column);
        Object key = scan.key(parentRowId);
        List<StoredRow> out = new ArrayList<>();
        if (key == null) return out;
        boolean exact = scan.exact(key);
        // an inexact range is a superset: candidates are checked, so read on until limit of them match
        int batch = exact ? limit : Math.max(64, limit);
        String after = afterRowId;
        while (true) {
            String from = after;
            List<StoredRow> page = new ArrayList<>();
            // run() sends what is staged in front of the read, in the same round trip: the scan sees it
            run(from == null ? scan.firstPageSql : scan.afterPageSql, (ps, i) -> {
                ps.setString(i++, partition);
                i = scan.bindKey(ps, i, key);
                if (from != null) ps.setString(i++, from);
                ps.setInt(i++, batch);
                return i;
            }, (index, rs) -> {
                while (rs.next()) page.add(PostgresServerStorage.versionedRowFrom(rs));
            });
            for (StoredRow row : page) {
                if (exact || scan.references(row, parentRowId)) out.add(row);
                if (out.size() == limit) return out;
            }
            if (page.size() < batch) return out;
            after = page.get(page.size() - 1).rowId();
        }
    }

    @Override
    public List<Map<String, Object>> queryAuthoritative(String sql, List<?> params) {
        sendPending();
        return PostgresValidationReads.query(c, storage.installedTables(), partition, sql, params);
    }

    @Override
    public ServeGate readServeGate(int runningSchemaVersion) {
        ServeGate[] gate = new ServeGate[1];
        run(CommitLogSql.READ_SERVE_GATE, (ps, i) -> {
            ps.setString(i++, partition);
            ps.setInt(i++, runningSchemaVersion);
            return i;
        }, (index, rs) -> gate[0] = PostgresServerStorage.serveGateFrom(rs));
        return gate[0];
    }

    // ------------------------------------------------------------ writes

    @Override
    public void upsertRow(String table, StoredRow row, int opIndex) {
        flush();   // this write's refusal must be its own, not a staged one's
        RowTable t = storage.table(table);
        String text = prefix() + candidate() + t.upsertSql;
        try (PreparedStatement ps = c.prepareStatement(text)) {
            t.bindUpsert(ps, 1, partition, row);
            ps.execute();
        } catch (SQLException e) {
            StorageException classified = PgErrors.classifyOn(c, e);
            if (classified.code() == StorageErrorCode.CONNECTION_LOST) throw classified;
            throw PgErrors.classifyRowWrite(e, opIndex);
        }
    }

    @Override
    public void deleteRow(String table, String rowId) {
        RowTable t = storage.table(table);
        write(t.deleteSql, (ps, i) -> t.bindDelete(ps, i, partition, rowId), IGNORE);
    }

    @Override
    public long appendCommit(NewCommit commit) {
        return append(commit, null);
    }

    @Override
    public long appendCommit(NewCommit commit, StoredPushResult applied) {
        if (applied.status() != StoredPushResult.Status.APPLIED) {
            throw new IllegalArgumentException("appendCommit stores an applied result");
        }
        return append(commit, applied);
    }

    @Override
    public long applyCommit(List<RowWrite> writes, NewCommit commit, StoredPushResult applied) {
        if (!locked) throw new IllegalStateException("applyCommit requires lockForPush() first");
        if (applied.status() != StoredPushResult.Status.APPLIED) {
            throw new IllegalArgumentException("applyCommit stores an applied result");
        }
        try {
            return append(commit, applied, writes);
        } catch (StorageException e) {
            if (!PgErrors.isOperationRefusal(e.code()) || writes.isEmpty()) throw e;
            // which write was it (the append itself could be the culprit)? A constraint or a refused value alike.
            // Back to the push savepoint, then the writes alone, one round trip each; the failing one throws with
            // its own opIndex. This path runs only when a commit is about to be rejected, which rolls back to the
            // savepoint again.
            run(CommitLogSql.ROLLBACK_TO_SAVEPOINT_KEEP, null, IGNORE);
            for (RowWrite w : writes) {
                Statement st = writeStatement(w);
                try {
                    run(st.sql, st.binder, IGNORE);
                } catch (StorageException each) {
                    if (PgErrors.isOperationRefusal(each.code())) {
                        throw new StorageException(each.code(), each.details(), w.opIndex(), each.getCause());
                    }
                    throw each;
                }
            }
            throw e;
        }
    }

    /** One statement of a multi-statement round trip: its text and how to bind it from a parameter index. */
    private record Statement(String sql, Binder binder) { }

    private Statement writeStatement(RowWrite w) {
        RowTable t = storage.table(w.table());
        if (w instanceof RowWrite.Upsert u) {
            return new Statement(t.upsertSql, (ps, i) -> t.bindUpsert(ps, i, partition, u.row()));
        }
        RowWrite.Delete d = (RowWrite.Delete) w;
        return new Statement(t.deleteSql, (ps, i) -> t.bindDelete(ps, i, partition, d.rowId()));
    }

    private long append(NewCommit commit, StoredPushResult applied) {
        return append(commit, applied, List.of());
    }

    private long append(NewCommit commit, StoredPushResult applied, List<RowWrite> writes) {
        if (staging()) {
            // no savepoint in front: if the database refuses any of it, the unit runs again unstaged (class
            // comment); eager writes of this commit, if any, took theirs
            long seq = head + 1;
            staged.rows(writes);
            staged.commit(seq, commit);
            if (applied != null) {
                staged.result(commit.clientId(), commit.clientCommitId(), StoredJson.pushResult(new StoredPushResult(
                        applied.status(), seq, applied.recordedAtMs(), applied.cacheIdentity(), applied.results())));
            }
            head = seq;
            publishedHead = seq;   // the staged append writes the head with the commits
            return seq;
        }
        List<Statement> before = new ArrayList<>();
        for (RowWrite w : writes) before.add(writeStatement(w));
        CommitLogSql.Numbering numbering = locked ? CommitLogSql.Numbering.GIVEN : CommitLogSql.Numbering.ALLOCATE;
        StringBuilder sql = new StringBuilder();
        for (Statement st : before) sql.append(st.sql).append(";\n");
        sql.append(CommitLogSql.appendCommit(numbering, applied != null));
        Binder append = appendBinder(numbering, head + 1, commit, applied);
        Binder binder = (ps, i) -> {
            for (Statement st : before) i = st.binder.bind(ps, i);
            return append.bind(ps, i);
        };
        long[] seq = new long[1];
        write(sql.toString(), binder, (index, rs) -> {
            if (index == before.size()) {   // the row writes' own result sets come first
                rs.next();
                seq[0] = rs.getLong(1);
            }
        });
        if (numbering == CommitLogSql.Numbering.GIVEN) head = seq[0];   // written back by finish()
        return seq[0];
    }

    /** Binds {@link CommitLogSql#appendCommit}; {@code given}: the seq of a {@code GIVEN} numbering. */
    private Binder appendBinder(CommitLogSql.Numbering numbering, long given, NewCommit commit,
                                StoredPushResult applied) {
        ChangeArrays changes = new ChangeArrays();
        changes.add(0, commit);   // the seq comes from the statement's own commit row
        String resultJson = applied == null ? null : StoredJson.pushResult(applied);
        return (ps, i) -> {
            if (numbering == CommitLogSql.Numbering.ALLOCATE) {
                ps.setString(i++, partition);
                ps.setString(i++, partition);
            } else {
                ps.setString(i++, partition);
                ps.setLong(i++, given);
            }
            ps.setString(i++, commit.clientId());
            ps.setString(i++, commit.clientCommitId());
            ps.setString(i++, commit.actorId());
            ps.setLong(i++, commit.createdAtMs());
            ps.setLong(i++, writerVersion);
            i = changes.bindChanges(ps, i, partition, false);
            i = changes.bindScopes(ps, i, partition, false);
            if (applied != null) {
                ps.setString(i++, partition);
                ps.setString(i++, commit.clientId());
                ps.setString(i++, commit.clientCommitId());
                ps.setString(i++, resultJson);
            }
            return i;
        };
    }

    @Override
    public LockedAppend lockAndAppend(int runningSchemaVersion, PushKey key, NewCommit commit,
                                      StoredPushResult applied) {
        if (!yielding || locked) throw new IllegalStateException("lockAndAppend follows writeRowsIfUnchanged");
        if (applied.status() != StoredPushResult.Status.APPLIED) {
            throw new IllegalArgumentException("lockAndAppend stores an applied result");
        }
        // the lock, its time, the gate, the stored result, the append (which numbers the commit from the locked
        // head and writes the head itself), and the time again, pipelined: the checks are made on the answers
        PushReads reads = new PushReads(storage, List.of(key), List.of(), false, false);   // the stored result alone
        String sql = String.join(";\n", CommitLogSql.LOCK_PARTITION, CommitLogSql.CLOCK_MICROS,
                CommitLogSql.READ_SERVE_GATE, reads.sql,
                CommitLogSql.appendCommit(CommitLogSql.Numbering.ALLOCATE, true), CommitLogSql.CLOCK_MICROS);
        Binder append = appendBinder(CommitLogSql.Numbering.ALLOCATE, 0, commit, applied);
        long[] row = new long[5];   // head, horizon, locked at, seq, appended at
        ServeGate[] gate = new ServeGate[1];
        run(sql, (ps, i) -> append.bind(ps, reads.bind(ps, bindLockAndGate(ps, i, runningSchemaVersion), partition)),
                (index, rs) -> {
                    // result sets: 0 = the FOR UPDATE row, 1 = its time, 2 = the gate, 3 = the stored result, 4 = the
                    // append's seq, 5 = its time
                    switch (index) {
                        case 0 -> {
                            if (rs.next()) {
                                row[0] = rs.getLong(1);
                                row[1] = rs.getLong(2);
                            }
                        }
                        case 1 -> row[2] = rs.next() ? rs.getLong(1) : 0;
                        case 2 -> gate[0] = PostgresServerStorage.serveGateFrom(rs);
                        case 3 -> reads.visit(0, rs);
                        case 4 -> row[3] = rs.next() ? rs.getLong(1) : 0;
                        case 5 -> row[4] = rs.next() ? rs.getLong(1) : 0;
                        default -> { }
                    }
                });
        locked(row[0]);
        savepoint = false;   // none was taken: a write after this one would take its own
        candidateSaved = false;
        head = row[3];
        publishedHead = row[3];   // the allocating append wrote the head and queued its notice
        boolean stored = !reads.existing.isEmpty() || !reads.unreadable.isEmpty();
        return new LockedAppend(gate[0], stored, row[3], row[1], Math.max(0, row[4] - row[2]) * 1_000);
    }

    /**
     * Binds the partition lock ({@link CommitLogSql#LOCK_PARTITION}, with or without the lock timeout and savepoint
     * around it) and then {@link CommitLogSql#READ_SERVE_GATE}, from {@code i}; returns the next free index.
     */
    private int bindLockAndGate(PreparedStatement ps, int i, int runningSchemaVersion) throws SQLException {
        ps.setString(i++, partition);
        ps.setString(i++, partition);
        ps.setString(i++, partition);
        ps.setInt(i++, runningSchemaVersion);
        return i;
    }

    @Override
    public void putPushResult(String clientId, String clientCommitId, StoredPushResult result) {
        String json = StoredJson.pushResult(result);
        if (staging()) {
            staged.result(clientId, clientCommitId, json);
        } else {
            write(CommitLogSql.PUT_PUSH_RESULT, pushResult(clientId, clientCommitId, json), IGNORE);
        }
    }

    /** Binds {@link CommitLogSql#PUT_PUSH_RESULT}. */
    private Binder pushResult(String clientId, String clientCommitId, String json) {
        return (ps, i) -> {
            ps.setString(i++, partition);
            ps.setString(i++, clientId);
            ps.setString(i++, clientCommitId);
            ps.setString(i++, json);
            return i;
        };
    }

    @Override
    public void rejectPush(String clientId, String clientCommitId, StoredPushResult rejected) {
        if (!locked) throw new IllegalStateException("a push rejection requires lockForPush() first");
        if (rejected.status() != StoredPushResult.Status.REJECTED) {
            throw new IllegalArgumentException("rejectPush stores a rejected result");
        }
        String json = StoredJson.pushResult(rejected);
        // a candidate that wrote nothing yet has nothing to roll back: its savepoint was never taken
        String undo = candidateSaved ? CommitLogSql.ROLLBACK_TO_PUSH_SAVEPOINT + ";\n" : "";
        if (staging() && undo.isEmpty()) {
            staged.result(clientId, clientCommitId, json);
        } else {   // a rollback runs at once; whatever is staged then was staged after its savepoint
            run(undo + CommitLogSql.PUT_PUSH_RESULT, pushResult(clientId, clientCommitId, json), IGNORE);
        }
        if (candidateSaved) savepoint = false;
        candidateSaved = true;   // the rejected candidate is complete; the next one starts with nextCandidate()
    }

    @Override
    public boolean advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        boolean[] advanced = new boolean[1];
        run(CommitLogSql.ADVANCE_CHECKPOINT, (ps, i) -> {
            ps.setLong(i++, watermark);
            ps.setLong(i++, observedRows);
            ps.setLong(i++, nowMs);
            ps.setString(i++, partition);
            ps.setString(i++, name);
            ps.setLong(i++, ownerEpoch);
            return i;
        }, (index, rs) -> advanced[0] = rs.next());   // RETURNING, not an update count (seeds/003)
        return advanced[0];
    }

    // ------------------------------------------------------------ a backfill batch

    @Override
    public Optional<StoredCheckpoint> claimCheckpoint(String name, int schemaVersion, long nowMs) {
        return on(c -> CommitLogSql.claimCheckpoint(c, partition, name, schemaVersion, nowMs));
    }

    @Override
    public Optional<BackfillPass> readBackfillPass(String name) {
        return on(c -> BackfillSql.readPassOn(c, partition, name));
    }

    @Override
    public void saveBackfillPass(BackfillPass pass) {
        if (!pass.partition().equals(partition)) throw new IllegalArgumentException("a pass of another partition");
        on(c -> {
            BackfillSql.savePassOn(c, pass);
            return null;
        });
    }

    @Override
    public List<StoredRow> scanSourceRows(String table, String afterRowId, int limit) {
        RowTable t = storage.table(table);
        return on(c -> BackfillSql.scanSourceOn(c, t, partition, afterRowId, limit));
    }

    @Override
    public List<BackfillPass.ChangedRow> changedRows(Collection<String> tables, long afterSeq, int afterIdx,
                                                     long throughSeq, int limit) {
        return on(c -> BackfillSql.changedRowsOn(c, partition, tables, afterSeq, afterIdx, throughSeq, limit));
    }

    @Override
    public long sourceCoverageSeq(Collection<String> tables) {
        return on(c -> BackfillSql.coverageOn(c, partition, tables));
    }

    @Override
    public long horizonSeq() { return on(c -> BackfillSql.horizonOn(c, partition)); }

    @Override
    public ActivationOutcome activateCheckpoint(String name, long ownerEpoch, long watermark,
                                                Collection<String> sources, long nowMs) {
        return on(c -> PostgresServerStorage.activateOn(c, partition, name, ownerEpoch, watermark, sources, nowMs));
    }

    @Override
    public SourceCoverage sourceChangesAbove(Collection<String> tables, long seq) {
        return on(c -> BackfillSql.changesAboveOn(c, partition, tables, seq));
    }

    /** Before a statement of its own on the connection: what is staged, or the isolation level if nothing ran yet. */
    private void sendPending() {
        if (!staged.isEmpty()) {
            flush();
        } else if (isolationPending) {
            run("SELECT 1", null, IGNORE);
        }
    }

    /** Runs {@code work} on this transaction's connection, after {@link #sendPending()}. */
    private <T> T on(PostgresServerStorage.SqlRead<T> work) {
        sendPending();
        try {
            return work.run(c);
        } catch (SQLException e) {
            throw PgErrors.classifyOn(c, e);
        }
    }

    @Override
    public boolean tryLockBackfillBatch(String name) {
        boolean[] got = new boolean[1];
        run(AdvisoryLocks.TRY_XACT_LOCK, (ps, i) -> {
            ps.setInt(i++, AdvisoryLocks.LockPurpose.BACKFILL_BATCH.value);
            ps.setInt(i++, AdvisoryLocks.key(partition, name));
            return i;
        }, (index, rs) -> {
            rs.next();
            got[0] = rs.getBoolean(1);
        });
        return got[0];
    }

    static StorageException unknownTable(String table) {
        return new StorageException(StorageErrorCode.SCHEMA_CHANGED, Map.of("table", table));
    }
}

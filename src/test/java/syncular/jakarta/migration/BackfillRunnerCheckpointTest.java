package syncular.jakarta.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.CheckpointState;
import syncular.jakarta.storage.Checkpoints;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.UnitTransactions;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.RowCodec;

/**
 * The RFC 0007 backfill runner on real PostgreSQL (issue 7): a rolling bump from {@code tasks} (v1) to v2 with a
 * {@code task_titles} projection. Proves the per-batch transaction (lock, claim, push-path commit, advance, pass
 * position: all or nothing), activation and recovery from {@code stale} and {@code unverifiable}, the writer fence
 * against an old writer, and the declaration barrier of a process that does not declare.
 */
class BackfillRunnerCheckpointTest {
    static final String NAME = "task_titles_v2";
    static final String CLIENT = "[\"backfill\",\"task_titles_v2\"]";
    final CompiledSchema v1 = TestSchemas.tasks(1);
    final CompiledSchema v2 = TestSchemas.tasksWith(2, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "title", "type": "string", "nullable": false},
            {"name": "done", "type": "boolean", "nullable": false}""", """
            {"name": "task_titles", "primaryKey": "id",
             "columns": [{"name": "id", "type": "string", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false},
                         {"name": "title", "type": "string", "nullable": false}],
             "scopes": [{"pattern": "project:{project_id}"}]}""");
    final String partition = EmbeddedPostgresSupport.partition("bf");
    final AtomicInteger clock = new AtomicInteger(1_000);
    /** What the runner told the operator: its {@code backfill.batch} events. */
    final List<ServerEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();

    EmbeddedPostgresSupport.Pool db;
    PostgresServerStorage old;
    PostgresServerStorage storage;
    Declarations declarations;

    @BeforeEach
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        old = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::get);
        old.ensureSchema(v1, List.of());
        for (int i = 0; i < 25; i++) pushTask(old, v1, "t" + (100 + i), "title " + i);
    }

    @AfterEach
    void tearDown() { db.close(); }

    /** Migrates a fresh v2 storage with the definition declared (what SyncRuntime does at start). */
    BackfillRunner migrate(BackfillDefinition def, int batchSize) {
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::get);
        declarations = new Declarations(List.of(def), 2, storage);
        storage.ensureSchema(v2, declarations.current());
        return new BackfillRunner(storage, UnitTransactions.of(storage), () -> v2, declarations,
                clock::get, batchSize, 5, 0, events::add);
    }

    BackfillRunner migrate(int batchSize) { return migrate(new ColumnCopyProjection(NAME, 2, "tasks", "task_titles"), batchSize); }

    long pushTask(PostgresServerStorage s, CompiledSchema schema, String id, String title) {
        byte[] payload = RowCodec.encode(schema.table("tasks").orElseThrow().descriptors(),
                new Object[] {id, "p1", title, false});
        return s.inTransaction(partition, tx -> {
            tx.lockPartitionForPush();
            long version = tx.getRow("tasks", id).map(r -> r.serverVersion() + 1).orElse(1L);
            StoredRow row = new StoredRow(id, version, TestSchemas.scopes("project_id", "p1"), payload);
            tx.upsertRow("tasks", row, 0);
            return tx.appendCommit(new NewCommit("client-1", "c-" + id + "-" + version, "actor-1", clock.get(),
                    List.of(StoredChange.upsert("tasks", id, version, row.scopes(), payload))));
        });
    }

    long deleteTask(String id) {
        return storage.inTransaction(partition, tx -> {
            tx.lockPartitionForPush();
            StoredRow row = tx.getRow("tasks", id).orElseThrow();
            tx.deleteRow("tasks", id);
            return tx.appendCommit(new NewCommit("client-1", "d-" + id, "actor-1", clock.get(),
                    List.of(new StoredChange("tasks", id, syncular.jakarta.storage.ChangeOp.DELETE, null,
                            row.scopes(), null))));
        });
    }

    StoredCheckpoint checkpoint() {
        return Checkpoints.read(storage, partition).stream().filter(c -> c.name().equals(NAME)).findFirst()
                .orElseThrow();
    }

    /** id → title of the projection, read through the storage's own decoding of payloads. */
    Map<String, String> projection() throws SQLException {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT id, title, \"_sync_server_version\" FROM task_titles WHERE \"_sync_partition\" = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    Map<String, String> sources() throws SQLException {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT id, title FROM tasks WHERE \"_sync_partition\" = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    List<String> backfillCommitIds() throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT c.client_commit_id, c.writer_version, (SELECT count(*) FROM sync_push_results r "
                        + "WHERE r.partition = c.partition AND r.client_id = c.client_id "
                        + "AND r.client_commit_id = c.client_commit_id) FROM sync_commits c "
                        + "WHERE c.partition = ? AND c.client_id = ? ORDER BY c.commit_seq")) {
            ps.setString(1, partition);
            ps.setString(2, CLIENT);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    assertEquals(2, rs.getLong(2), "stamped with the running writer version");
                    assertEquals(1, rs.getLong(3), "the push result commits with the batch");
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    /** Batches by hand until the pass is exhausted, without activating (as if the node died right there). */
    BackfillRunner.Batch exhaustPass(BackfillRunner runner, BackfillDefinition def) {
        for (int i = 0; i < 100; i++) {
            BackfillRunner.Batch b = runner.runBatch(partition, def);
            if (b.passExhausted()) return b;
        }
        throw new AssertionError("the pass never ended");
    }

    @Test
    void aFullPassWritesThroughThePushPathInBatchTransactionsAndActivates() throws Exception {
        long coverage = Checkpoints.coverage(old, partition, List.of("tasks"));
        BackfillRunner runner = migrate(10);
        assertEquals(CheckpointState.DECLARED, checkpoint().state());
        assertEquals(3, runner.runToCompletion(10), "3 batches (10, 10, 5 rows), activation in the tick of the third");

        StoredCheckpoint cp = checkpoint();
        assertEquals(CheckpointState.ACTIVATED, cp.state());
        assertEquals(coverage, cp.watermark(), "the watermark is the coverage captured when the pass started");
        assertEquals(25, cp.observedRows());
        assertEquals(sources(), projection());
        // one claim per batch: epochs 1..3, each batch's id is <epoch>:<pass>:<position before the batch>
        assertEquals(List.of("1:1:0/", "2:1:0/t109", "3:1:0/t119"), backfillCommitIds());
        assertTrue(declarations.current().isEmpty(), "nothing pending: every process may serve");
        // each batch is an event with its rows, and the last one says the checkpoint activated
        List<ServerEvent.BackfillBatch> batches = events.stream().map(ServerEvent.BackfillBatch.class::cast).toList();
        assertEquals(List.of(10L, 10L, 5L), batches.stream().map(ServerEvent.BackfillBatch::rows).toList());
        assertEquals(List.of(false, false, true), batches.stream().map(ServerEvent.BackfillBatch::activated).toList());
        assertTrue(batches.stream().allMatch(b -> b.checkpoint().equals(NAME) && b.partition().equals(partition)));
    }

    @Test
    void thePlannerStatisticsAreRefreshedAsThePassCrossesEachDoublingMilestone() throws Exception {
        // 2,500 more source rows (2,525 in all), pushed in one transaction: milestones at 1,000 and 2,000 rows
        byte[][] payloads = new byte[2_500][];
        old.inTransaction(partition, tx -> {
            tx.lockPartitionForPush();
            List<StoredChange> changes = new ArrayList<>();
            for (int i = 0; i < 2_500; i++) {
                String id = "s" + (10_000 + i);
                payloads[i] = RowCodec.encode(v1.table("tasks").orElseThrow().descriptors(),
                        new Object[] {id, "p1", "bulk " + i, false});
                StoredRow row = new StoredRow(id, 1, TestSchemas.scopes("project_id", "p1"), payloads[i]);
                tx.upsertRow("tasks", row, 0);
                changes.add(StoredChange.upsert("tasks", id, 1, row.scopes(), payloads[i]));
            }
            return tx.appendCommit(new NewCommit("client-1", "bulk", "actor-1", clock.get(), changes));
        });
        BackfillRunner runner = migrate(500);
        long before = EmbeddedPostgresSupport.analyzeCount(db, "task_titles");
        assertTrue(runner.runToCompletion(100) > 0, "activated");
        assertEquals(2_525, rowCount("task_titles"));
        // the pacer's batches start small and double, so which batch crosses a milestone varies; each is crossed once
        assertEquals(before + 2, EmbeddedPostgresSupport.analyzeCount(db, "task_titles"),
                "one refresh at 1,000 and one at 2,000 rows");
        assertEquals(before + 2, EmbeddedPostgresSupport.analyzeCount(db, "sync_row_scopes"));
    }

    @Test
    void aMilestoneIsEachDoublingOfAThousandRowsCrossedByABatch() {
        assertFalse(BackfillRunner.statisticsMilestone(0, 999));
        assertTrue(BackfillRunner.statisticsMilestone(999, 1_000));
        assertFalse(BackfillRunner.statisticsMilestone(1_000, 1_999));
        assertTrue(BackfillRunner.statisticsMilestone(1_999, 2_000));
        assertTrue(BackfillRunner.statisticsMilestone(0, 5_000), "a batch over several counts once");
        assertFalse(BackfillRunner.statisticsMilestone(4_000, 7_999));
        assertTrue(BackfillRunner.statisticsMilestone(1_023_999, 1_024_000));
    }

    long rowCount(String table) throws SQLException {
        try (Connection c = db.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE _sync_partition = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** A client's v2 push of one {@code task_titles} row as a node's request pushes it; {@code gate} under the lock. */
    syncular.jakarta.sync.PushProcessor.Pushed pushTitle(syncular.jakarta.storage.StorageTransaction tx, String id,
                                                          String title,
                                                          syncular.jakarta.sync.PushProcessor.TransactionGate gate) {
        byte[] payload = RowCodec.encode(v2.table("task_titles").orElseThrow().descriptors(),
                new Object[] {id, "p1", title});
        Map<String, List<String>> allowed = Map.of("project_id", List.of("p1"));
        var scope = new syncular.jakarta.sync.PushProcessor.RequestScope(
                new syncular.jakarta.host.Identity("actor-2", partition, allowed), "client-2",
                syncular.jakarta.wire.WireVersion.V2);
        var processor = new syncular.jakarta.sync.PushProcessor(storage, clock::get,
                syncular.jakarta.sync.Validation.NONE, 100);
        return processor.pushOn(tx, new syncular.jakarta.sync.PushProcessor.Batch(scope, v2, allowed,
                List.of(new syncular.jakarta.wire.PushCommit("title-" + id, List.of(
                        syncular.jakarta.wire.PushCommit.Operation.upsert("task_titles", id, null, payload)))),
                gate));
    }

    /** Waits until another session of this test's database waits for a lock (the batch, here). */
    void awaitLockWaiter() {
        long deadline = System.nanoTime() + 20_000_000_000L;
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() "
                        + "AND datname = current_database()")) {
            while (System.nanoTime() < deadline) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) > 0) return;
                }
                Thread.sleep(5);
            }
        } catch (SQLException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
        throw new AssertionError("nobody waited for a lock");
    }

    /** {@code work} in a transaction of its own on a client thread; the future has its push or its failure. */
    java.util.concurrent.CompletableFuture<syncular.jakarta.sync.PushProcessor.Pushed> onClientThread(
            syncular.jakarta.storage.ServerStorage.TransactionWork<syncular.jakarta.sync.PushProcessor.Pushed> work) {
        var pushed = new java.util.concurrent.CompletableFuture<syncular.jakarta.sync.PushProcessor.Pushed>();
        new Thread(() -> {
            try {
                pushed.complete(storage.inTransaction(partition, work));
            } catch (RuntimeException e) {
                pushed.completeExceptionally(e);
            }
        }).start();
        return pushed;
    }

    /** task_titles' change log for {@code id}: the row versions in commit order, with their client ids. */
    List<String> titleChanges(String id) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT ch.row_version, co.client_id FROM sync_changes ch JOIN sync_commits co ON "
                        + "co.partition = ch.partition AND co.commit_seq = ch.commit_seq WHERE ch.partition = ? "
                        + "AND ch.tbl = 'task_titles' AND ch.row_id = ? ORDER BY ch.commit_seq, ch.idx")) {
            ps.setString(1, partition);
            ps.setString(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getLong(1) + " " + rs.getString(2));
            }
        }
        return out;
    }

    long titleVersion(String id) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT _sync_server_version FROM task_titles WHERE _sync_partition = ? AND _sync_row_id = ?")) {
            ps.setString(1, partition);
            ps.setString(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    @Test
    void aPushThatWantsARowTheBatchWroteBeforeTheLockGoesFirstAndTheBatchIsRedone() throws Exception {
        // the batch writes its projection rows, then waits for the partition lock, which a client's push holds;
        // that push then writes one of those rows: a deadlock, which the batch must lose, never the push
        BackfillRunner runner = migrate(10);
        var clientLocked = new java.util.concurrent.CountDownLatch(1);
        var clientPushed = onClientThread(tx -> pushTitle(tx, "t100", "from a client", gate -> {
            clientLocked.countDown();
            awaitLockWaiter();   // the batch: its rows written, waiting for this lock
        }));
        assertTrue(clientLocked.await(20, java.util.concurrent.TimeUnit.SECONDS));
        StorageException yielded = assertThrows(StorageException.class,
                () -> runner.runBatch(partition, new ColumnCopyProjection(NAME, 2, "tasks", "task_titles")));
        var pushed = clientPushed.get(30, java.util.concurrent.TimeUnit.SECONDS);

        assertEquals(StorageErrorCode.LOCK_NOT_AVAILABLE, yielded.code(), "the batch's yield timeout ended its wait");
        assertTrue(BackfillRunner.yielded(yielded));
        assertEquals(null, pushed.failure(), "the client's push is never the victim");
        assertEquals(syncular.jakarta.wire.PushResult.Status.APPLIED, pushed.outcomes().get(0).result().status());
        assertEquals(List.of(), backfillCommitIds(), "nothing of it committed");
        assertEquals(List.of("1 client-2"), titleChanges("t100"));
        assertEquals(1, titleVersion("t100"));

        assertTrue(runner.runToCompletion(10) > 0, "redone, and activated");
        assertEquals(sources(), projection(), "the projection is the source's, the client's title overwritten");
        assertEquals(List.of("1 client-2", "2 " + CLIENT), titleChanges("t100"), "one version after the other");
        assertEquals(2, titleVersion("t100"));
        assertEquals(List.of("1 " + CLIENT), titleChanges("t101"));
    }

    @Test
    void aRowAPushInsertedBetweenTheBatchsReadAndItsWriteSendsTheBatchBack() throws Exception {
        // the client's push has written t100 but not committed when the batch reads (absent) and writes it (the
        // insert waits for the push); then the push commits: the batch's write finds a row it did not read
        BackfillRunner runner = migrate(10);
        var clientWrote = new java.util.concurrent.CountDownLatch(1);
        var clientPushed = onClientThread(tx -> {
            var p = pushTitle(tx, "t100", "from a client", gate -> { });
            tx.getRow("task_titles", "t100");   // sends its staged writes
            clientWrote.countDown();
            awaitLockWaiter();   // the batch's insert of t100 waits for this transaction
            return p;
        });
        assertTrue(clientWrote.await(20, java.util.concurrent.TimeUnit.SECONDS));
        RuntimeException yielded = assertThrows(syncular.jakarta.sync.PushProcessor.RowsChanged.class,
                () -> runner.runBatch(partition, new ColumnCopyProjection(NAME, 2, "tasks", "task_titles")));
        var pushed = clientPushed.get(30, java.util.concurrent.TimeUnit.SECONDS);

        assertTrue(BackfillRunner.yielded(yielded), "the batch found t100 changed and rolled back");
        assertEquals(null, pushed.failure());
        assertEquals(syncular.jakarta.wire.PushResult.Status.APPLIED, pushed.outcomes().get(0).result().status());
        assertEquals(List.of(), backfillCommitIds());
        assertEquals(1, titleVersion("t100"));

        assertTrue(runner.runToCompletion(10) > 0);
        assertEquals(sources(), projection());
        assertEquals(List.of("1 client-2", "2 " + CLIENT), titleChanges("t100"));
    }

    @Test
    void aBatchThatYieldedIsRedoneUnderThePartitionLockSoItCannotYieldAgain() throws Exception {
        // a scope-index entry for a projection row that does not exist: the rows-first insert of t100 meets it as
        // it would meet a row a push inserted after the read, and yields; a loop of yields would stall the pass
        BackfillRunner runner = migrate(10);
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO sync_row_scopes(partition, tbl, var, value, row_id) "
                        + "VALUES (?, 'task_titles', 'project_id', 'p1', 't100')")) {
            ps.setString(1, partition);
            ps.executeUpdate();
        }
        assertEquals(0, runner.tick().batches(), "the rows-first batch yielded");
        assertEquals(List.of(), backfillCommitIds(), "and nothing of it committed");
        assertEquals(1, runner.tick().batches(), "the batch again, as an ordinary push");
        assertEquals(1, titleVersion("t100"));
        assertTrue(runner.runToCompletion(10) > 0);
        assertEquals(sources(), projection());
        assertEquals(List.of("1 " + CLIENT), titleChanges("t100"));
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*), count(DISTINCT row_id) FROM sync_row_scopes WHERE partition = ? "
                        + "AND tbl = 'task_titles'")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(List.of(25L, 25L), List.of(rs.getLong(1), rs.getLong(2)), "one entry per row");
            }
        }
    }

    @Test
    void aYieldIsRecognisedThroughTheContainersWrappingAndNothingElseIs() {
        StorageException timeout = new StorageException(StorageErrorCode.LOCK_NOT_AVAILABLE, Map.of());
        assertTrue(BackfillRunner.yielded(timeout));
        assertTrue(BackfillRunner.yielded(new jakarta.ejb.EJBException(timeout)), "an EJB system exception's cause");
        assertTrue(BackfillRunner.yielded(new jakarta.ejb.EJBTransactionRolledbackException("rolled back",
                new IllegalStateException(timeout))));
        assertFalse(BackfillRunner.yielded(new StorageException(StorageErrorCode.CONSTRAINT_VIOLATION, Map.of())));
        assertFalse(BackfillRunner.yielded(new IllegalStateException("a definition bug")));
    }

    @Test
    void aPausedBackfillWritesNothingUntilResumedAndARetryRunsOneBatchNow() throws Exception {
        BackfillRunner runner = migrate(10);
        assertTrue(storage.setCheckpointPaused(partition, NAME, 1L));
        assertEquals(0, runner.tick().batches());
        assertEquals(0, runner.retry(partition, NAME).orElseThrow().batches(), "a retry does not bypass a pause");
        assertEquals(List.of(), backfillCommitIds());
        assertEquals(CheckpointState.DECLARED, checkpoint().state(), "not even claimed");
        assertTrue(storage.setCheckpointPaused(partition, NAME, null));
        assertEquals(1, runner.retry(partition, NAME).orElseThrow().batches());
        assertEquals(List.of("1:1:0/"), backfillCommitIds());
        assertTrue(runner.retry(partition, "not-declared").isEmpty());
        assertTrue(runner.retry("another-partition", NAME).isEmpty());
    }

    @Test
    void aProcessThatDoesNotDeclareIsBarredUntilActivationAndAnOldWriterIsFenced() throws Exception {
        // before the migration the old writer appends, and raw JDBC without writer_version too
        rawAppend(partition, 90_000, true);
        BackfillRunner runner = migrate(10);
        // from the declaration on: the old storage instance (writer version 1) and raw JDBC are refused by the trigger
        StorageException fenced = assertThrows(StorageException.class, () -> pushTask(old, v1, "t100", "late"));
        assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, fenced.code());
        assertThrows(SQLException.class, () -> rawAppend(partition, 90_001, false));

        PostgresServerStorage other = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::get);
        StorageException barred = assertThrows(StorageException.class, () -> other.ensureSchema(v2, List.of()));
        assertEquals(StorageErrorCode.CHECKPOINT_INCOMPLETE, barred.code());
        assertEquals(partition, barred.details().get("partition"));
        runner.runToCompletion(10);
        other.ensureSchema(v2, List.of());   // activated: the non-declaring process may serve now
        assertEquals(2, other.writerVersion());
    }

    /** A commit appended with raw JDBC (an unaware old binary: no writer_version), rolled back either way. */
    void rawAppend(String p, long seq, boolean expectAllowed) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO sync_commits(partition, commit_seq, client_id, "
                    + "client_commit_id, actor_id, created_at_ms) VALUES (?, ?, 'old', 'old-1', 'old', 0)")) {
                ps.setString(1, p);
                ps.setLong(2, seq);
                ps.executeUpdate();
                assertTrue(expectAllowed, "the old writer's append should have been refused");
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    @Test
    void sourceChangesAboveTheWatermarkAreProjectedUnderTheLockAndTheActivationCommitsWithThem() throws Exception {
        BackfillDefinition def = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillRunner runner = migrate(def, 10);
        BackfillRunner.Batch last = exhaustPass(runner, def);
        long w1 = last.watermark();
        pushTask(storage, v2, "t105", "changed after the watermark");
        pushTask(storage, v2, "t200", "new after the watermark");
        deleteTask("t110");
        assertEquals(ActivationOutcome.ACTIVATED, runner.activate(partition, def));

        StoredCheckpoint cp = checkpoint();
        assertEquals(CheckpointState.ACTIVATED, cp.state());
        assertTrue(cp.watermark() > w1, "the activation certifies the coverage it caught up to");
        assertEquals(Checkpoints.coverage(storage, partition, List.of("tasks")), cp.watermark());
        assertEquals(sources(), projection(), "updated, inserted and deleted rows all reached the projection");
        BackfillPass.Progress report = storage.backfillProgress().get(0);
        assertEquals(BackfillPass.Mode.CATCH_UP, report.pass().orElseThrow().mode());
        assertEquals(3, report.pass().get().passRows(), "the last catch-up read only the three changed rows");
    }

    @Test
    void moreChangesThanTheActivationMayProjectUnderTheLockAreStaleAndCatchUpPassesRecover() throws Exception {
        BackfillDefinition def = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillRunner runner = migrate(def, 10);
        BackfillRunner.Batch last = exhaustPass(runner, def);
        for (int i = 0; i < BackfillRunner.CLOSE_OUT_MIN_ROWS; i++) pushTask(storage, v2, "n" + i, "new " + i);
        assertEquals(ActivationOutcome.STALE, runner.activate(partition, def), "the lock is never held for more");
        assertEquals(last.watermark(), checkpoint().watermark(), "nothing of the attempt committed but its claim");

        runner.runToCompletion(20);
        assertEquals(CheckpointState.ACTIVATED, checkpoint().state());
        assertEquals(sources(), projection());
    }

    /**
     * A writer that lands a source change during every batch, after the batch's pass took its watermark (what busy
     * clients do to a pass that takes time): before the activation projected the last changes under the lock, every
     * pass ended with a change above its watermark and the checkpoint never activated.
     */
    @Test
    void aWriterLandingAChangeInEveryPassCannotKeepTheActivationStale() throws Exception {
        java.util.concurrent.atomic.AtomicInteger landed = new java.util.concurrent.atomic.AtomicInteger();
        ColumnCopyProjection copy = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillDefinition busy = new BackfillDefinition() {
            @Override public String name() { return copy.name(); }

            @Override public int schemaVersion() { return copy.schemaVersion(); }

            @Override public List<String> sourceTables() { return copy.sourceTables(); }

            @Override public List<BackfillDefinition.ProjectionWrite> step(List<BackfillDefinition.SourceRow> batch) {
                int n = landed.incrementAndGet();
                Thread writer = new Thread(() -> pushTask(storage, v2, "live" + n, "written during a batch"));
                writer.start();
                try {
                    // a batch holds no push lock while it steps, so the write lands now; the activation holds it,
                    // so there the write waits for the activation's commit
                    writer.join(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return copy.step(batch);
            }
        };
        BackfillRunner runner = migrate(busy, 10);
        assertTrue(runner.runToCompletion(30) > 0, "activated within 30 ticks");
        StoredCheckpoint cp = checkpoint();
        assertEquals(CheckpointState.ACTIVATED, cp.state());
        assertTrue(landed.get() > 3, "a change landed during each of the " + landed.get() + " steps");
        // exactly the source as of the certified watermark: every row written at or below it, none above
        Map<String, String> certified = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT t.id, t.title FROM tasks t WHERE t.\"_sync_partition\" = ? AND NOT EXISTS (SELECT 1 FROM "
                        + "sync_changes ch WHERE ch.partition = ? AND ch.tbl = 'tasks' AND ch.row_id = t.id "
                        + "AND ch.commit_seq > ?)")) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.setLong(3, cp.watermark());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) certified.put(rs.getString(1), rs.getString(2));
            }
        }
        assertEquals(certified, projection());
        assertTrue(projection().size() > 25, "the changes of the last pass are in the projection too");
    }

    @Test
    void pruningPastTheWatermarkIsUnverifiableAndAFreshFullPassRecovers() throws Exception {
        BackfillDefinition def = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillRunner runner = migrate(def, 10);
        exhaustPass(runner, def);
        pushTask(storage, v2, "t101", "changed, then pruned away");
        String epoch = storage.touchPartition(partition, clock.get(), "epoch-1").logEpoch();
        storage.pruneCommitsThrough(partition, new CommitPruneQuery(epoch, storage.getMaxCommitSeq(partition)));
        assertEquals(ActivationOutcome.UNVERIFIABLE, runner.activate(partition, def));

        runner.runToCompletion(10);
        assertEquals(CheckpointState.ACTIVATED, checkpoint().state());
        assertEquals(sources(), projection());
        BackfillPass pass = storage.backfillProgress().get(0).pass().orElseThrow();
        assertEquals(2, pass.pass());
        assertEquals(BackfillPass.Mode.FULL, pass.mode());
        assertEquals(25, pass.passRows(), "a fresh full pass over every source row");
        assertEquals(storage.getHorizonSeq(partition), checkpoint().watermark(),
                "the log was pruned past every source change: the horizon is the certified watermark");
    }

    @Test
    void aBatchSkipsWhileAnotherTransactionHoldsTheCheckpointsBatchLock() throws Exception {
        BackfillDefinition def = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillRunner runner = migrate(def, 10);
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            // the unit leaves its transaction open: the batch lock stays held until the rollback below
            boolean held = storage.runUnit(c, partition, false, holder -> holder.tryLockBackfillBatch(NAME));
            assertTrue(held);
            assertEquals(BackfillRunner.Batch.Kind.SKIPPED, runner.runBatch(partition, def).kind());
            assertEquals(0, checkpoint().ownerEpoch(), "a skipped batch claims nothing");
            c.rollback();   // the transaction-scoped lock ends with the transaction, whatever the pool does next
            c.setAutoCommit(true);
        }
        assertEquals(BackfillRunner.Batch.Kind.WROTE, runner.runBatch(partition, def).kind());
        assertEquals(1, checkpoint().ownerEpoch());
    }

    @Test
    void aBatchThatFailsRollsBackWholeClaimIncludedAndIsRedoneExactlyOnce() throws Exception {
        ColumnCopyProjection copy = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        AtomicInteger calls = new AtomicInteger();
        BackfillDefinition crashing = new BackfillDefinition() {
            @Override public String name() { return NAME; }
            @Override public int schemaVersion() { return 2; }
            @Override public List<String> sourceTables() { return copy.sourceTables(); }
            @Override public List<ProjectionWrite> step(List<SourceRow> batch) {
                List<ProjectionWrite> writes = copy.step(batch);
                if (calls.incrementAndGet() == 2) {
                    // the writes are staged, then the "process" dies before the batch commits
                    throw new IllegalStateException("simulated crash in the middle of batch 2");
                }
                return writes;
            }
        };
        BackfillRunner runner = migrate(crashing, 10);
        runner.tick();
        StoredCheckpoint afterFirst = checkpoint();
        BackfillPass passAfterFirst = storage.backfillProgress().get(0).pass().orElseThrow();
        runner.tick();   // crashes: logged, rolled back
        assertEquals(afterFirst, checkpoint(), "claim, watermark and observed rows rolled back with the batch");
        assertEquals(passAfterFirst, storage.backfillProgress().get(0).pass().orElseThrow(),
                "the position did not move");
        assertEquals(List.of("1:1:0/"), backfillCommitIds(), "no commit of the failed batch");

        runner.runToCompletion(10);
        assertEquals(CheckpointState.ACTIVATED, checkpoint().state());
        assertEquals(sources(), projection());
        List<String> ids = backfillCommitIds();
        assertEquals(List.of("1:1:0/", "2:1:0/t109", "3:1:0/t119"), ids, "the redone batch reuses the rolled-back id");
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT max(\"_sync_server_version\") FROM task_titles WHERE \"_sync_partition\" = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(1, rs.getLong(1), "no projection row was written twice");
            }
        }
    }

    @Test
    void declarationsCoverEveryKnownPartitionBeforeTheMigrationAndOnlyPendingRowsAfter() {
        String registeredOnly = EmbeddedPostgresSupport.partition("reg");
        old.touchPartition(registeredOnly, clock.get(), "e1");
        PostgresServerStorage fresh = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::get);
        Declarations d = new Declarations(List.of(new ColumnCopyProjection(NAME, 2, "tasks", "task_titles"),
                new ColumnCopyProjection("for_v3", 3, "tasks", "task_titles")), 2, fresh);
        assertEquals(List.of(NAME), List.copyOf(d.names()), "a definition for another version is not declared");
        List<CheckpointDeclaration> before = d.current();
        assertTrue(before.contains(new CheckpointDeclaration(partition, NAME, 2)), "a partition with commits");
        assertTrue(before.contains(new CheckpointDeclaration(registeredOnly, NAME, 2)), "a registered partition");
        fresh.ensureSchema(v2, before);
        assertEquals(2, Checkpoints.read(fresh, registeredOnly).size() + Checkpoints.read(fresh, partition).size());
        assertEquals(before.size(), d.current().size(), "both still pending after the migration");
        assertTrue(d.refusal().isEmpty(), "the declaring process serves");
        Declarations none = new Declarations(List.of(), 2, fresh);
        assertTrue(none.refusal().orElseThrow().contains(NAME), "a process without the definition refuses");
        assertThrows(IllegalArgumentException.class, () -> new Declarations(List.of(
                new ColumnCopyProjection(NAME, 2, "tasks", "a"), new ColumnCopyProjection(NAME, 2, "tasks", "b")),
                2, fresh));
    }

    @Test
    void aDrainRunsBatchesBackToBackUntilActivationOrUntilTold() {
        BackfillRunner runner = migrate(10);
        BackfillRunner.Tick one = runner.drain(0, () -> false);
        assertEquals(1, one.batches(), "told to stop: one batch, as a plain tick");
        BackfillRunner.Tick rest = runner.drain(0, () -> true);
        assertEquals(2, rest.batches(), "the remaining 15 rows in batches of 10, in one drain");
        assertEquals(1, rest.activated());
        assertEquals(CheckpointState.ACTIVATED, checkpoint().state());
        assertEquals(0, runner.drain(0, () -> true).batches(), "nothing left: the loop ends at once");
    }

    @Test
    void aPartitionFirstSeenAfterTheMigrationGetsItsFenceRaised() {
        migrate(10);
        String late = EmbeddedPostgresSupport.partition("late");
        storage.touchPartition(late, clock.get(), "e1");   // the touch itself raises the new partition's fence
        assertEquals(0, storage.raiseRegistryFences(2), "the timer's sweep finds nothing left: never twice");
        StorageException fenced = assertThrows(StorageException.class, () -> old.inTransaction(late, tx -> {
            tx.lockPartitionForPush();
            return tx.appendCommit(new NewCommit("client-1", "x", "actor-1", 0, List.of()));
        }));
        assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, fenced.code());
    }

    @Test
    void theOperatorReportShowsStatePositionRateAndEta() {
        BackfillDefinition def = new ColumnCopyProjection(NAME, 2, "tasks", "task_titles");
        BackfillRunner runner = migrate(def, 5);
        clock.set(10_000);
        runner.runBatch(partition, def);
        clock.set(11_000);
        runner.runBatch(partition, def);   // 10 of 25 rows in 1 s of pass time
        List<Map<String, Object>> report = CheckpointReport.build(storage, declarations, clock::get);
        assertEquals(1, report.size());
        Map<String, Object> cp = report.get(0);
        assertEquals(partition, cp.get("partition"));
        assertEquals("backfilling", cp.get("state"));
        assertEquals(10L, cp.get("observedRows"));
        assertEquals(true, cp.get("declaredHere"));
        @SuppressWarnings("unchecked")
        Map<String, Object> pass = (Map<String, Object>) cp.get("pass");
        assertEquals("full", pass.get("mode"));
        assertEquals("0/t109", pass.get("position"));
        assertEquals(10.0, pass.get("rowsPerSecond"));
        assertEquals(25L, pass.get("rowsTotal"));
        assertEquals(2L, pass.get("etaSeconds"), "15 rows left at 10 rows/s");
        Declarations elsewhere = new Declarations(List.of(), 2, storage);
        Map<String, Object> seenElsewhere = CheckpointReport.build(storage, elsewhere, clock::get).get(0);
        assertEquals(false, seenElsewhere.get("declaredHere"));
        assertFalse(((Map<?, ?>) seenElsewhere.get("pass")).containsKey("etaSeconds"),
                "no ETA where the sources are unknown");
    }

    @Test
    void configuredDefinitionsParseAndRefuseMalformedEntries() {
        List<BackfillDefinition> parsed = ColumnCopyProjection.parseAll(" a@2:tasks->titles , b@3:x->y");
        assertEquals(List.of(new ColumnCopyProjection("a", 2, "tasks", "titles"),
                new ColumnCopyProjection("b", 3, "x", "y")), parsed);
        for (String bad : List.of("a:tasks->t", "a@x:tasks->t", "a@2:tasks", "@2:s->t", "a@2:s->", "a@0:s->t")) {
            assertThrows(IllegalArgumentException.class, () -> ColumnCopyProjection.parseAll(bad), bad);
        }
        assertTrue(ColumnCopyProjection.parseAll("").isEmpty());
        assertFalse(ColumnCopyProjection.parseAll("n@1:s->t").isEmpty());
    }
}

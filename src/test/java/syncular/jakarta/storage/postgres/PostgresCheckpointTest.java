package syncular.jakarta.storage.postgres;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.CheckpointState;
import syncular.jakarta.storage.Checkpoints;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.SourceCoverage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;

/** The RFC 0007 checkpoint lifecycle (seeds/003, UPSTREAM-SERVER §3.4) on PostgreSQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresCheckpointTest {
    private static final List<String> SOURCES = List.of("tasks");
    private final CompiledSchema schema = TestSchemas.tasks(1);
    private EmbeddedPostgresSupport.Pool db;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L);
        storage.ensureSchema(schema, List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    private long push(String p, String id) {
        StoredRow row = TestSchemas.taskRow(schema, id, "p1", 1);
        return storage.inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row, 0);
            return tx.appendCommit(TestSchemas.upsertCommit(id, row));
        });
    }

    @Test @Seed("003 declareCheckpoint")
    void declaringInsertsADeclaredRowAndRaisesTheFenceIdempotently() throws Exception {
        String p = EmbeddedPostgresSupport.partition("declare");
        StoredCheckpoint cp = PostgresCheckpoints.declare(db, p, "b-proj", 1, 10);
        assertEquals(new StoredCheckpoint(p, "b-proj", 1, CheckpointState.DECLARED, 0, 0, 0, 10, null), cp);
        StoredCheckpoint claimed = Checkpoints.claim(storage, p, "b-proj", 1, 20);
        assertEquals(claimed, PostgresCheckpoints.declare(db, p, "b-proj", 1, 30), "a re-declare changes nothing");
        PostgresCheckpoints.declare(db, p, "a-proj", 1, 40);
        assertEquals(List.of("a-proj", "b-proj"), Checkpoints.read(storage, p).stream().map(StoredCheckpoint::name)
                .toList());
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT required_writer_version FROM sync_writer_fence WHERE partition = ?")) {
            ps.setString(1, p);
            var rs = ps.executeQuery();
            assertTrue(rs.next());
            assertEquals(1, rs.getInt(1));
        }
    }

    @Test @Timeout(30) @Seed("UPSTREAM-SERVER §3.4: claimers get distinct owner epochs")
    void concurrentClaimsGetDistinctOwnerEpochs() throws Exception {
        String p = EmbeddedPostgresSupport.partition("claims");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        int claimers = 6;
        ExecutorService pool = Executors.newFixedThreadPool(claimers);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<StoredCheckpoint>> futures = new ArrayList<>();
        for (int i = 0; i < claimers; i++) {
            long now = i;
            Callable<StoredCheckpoint> claim = () -> {
                start.await();
                return Checkpoints.claim(storage, p, "proj", 1, now);
            };
            futures.add(pool.submit(claim));
        }
        start.countDown();
        Set<Long> epochs = new HashSet<>();
        for (Future<StoredCheckpoint> f : futures) {
            StoredCheckpoint cp = f.get(20, SECONDS);
            assertEquals(CheckpointState.BACKFILLING, cp.state());
            epochs.add(cp.ownerEpoch());
        }
        pool.shutdown();
        assertEquals(Set.of(1L, 2L, 3L, 4L, 5L, 6L), epochs);
    }

    @Test @Seed("003 claimCheckpoint")
    void claimingAnAbsentOrActivatedCheckpointIsRefused() {
        String p = EmbeddedPostgresSupport.partition("claim-absent");
        assertEquals(StorageErrorCode.CHECKPOINT_NOT_DECLARED, assertThrows(StorageException.class,
                () -> Checkpoints.claim(storage, p, "nope", 1, 0)).code());
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        assertEquals(ActivationOutcome.ACTIVATED, storage.activateCheckpoint(p, "proj", epoch, 0, SOURCES, 5));
        assertEquals(StorageErrorCode.CHECKPOINT_NOT_DECLARED, assertThrows(StorageException.class,
                () -> Checkpoints.claim(storage, p, "proj", 1, 0)).code());
    }

    @Test
    void aPausedCheckpointIsNotClaimedUntilResumedAndAnActivatedOneCannotBePaused() {
        String p = EmbeddedPostgresSupport.partition("pause");
        assertFalse(storage.setCheckpointPaused(p, "proj", 5L), "nothing to pause");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long first = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        assertTrue(storage.setCheckpointPaused(p, "proj", 5L));
        assertEquals(5L, Checkpoints.read(storage, p).get(0).pausedAtMs());
        assertEquals(StorageErrorCode.CHECKPOINT_NOT_DECLARED, assertThrows(StorageException.class,
                () -> Checkpoints.claim(storage, p, "proj", 1, 0)).code(), "no batch claims a paused checkpoint");
        assertEquals(first, Checkpoints.read(storage, p).get(0).ownerEpoch(), "and the refused claim wrote nothing");
        assertTrue(storage.setCheckpointPaused(p, "proj", null));
        assertFalse(Checkpoints.read(storage, p).get(0).paused());
        long second = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        assertEquals(first + 1, second);
        assertEquals(ActivationOutcome.ACTIVATED, storage.activateCheckpoint(p, "proj", second, 0, SOURCES, 5));
        assertFalse(storage.setCheckpointPaused(p, "proj", 9L), "an activated checkpoint is done, not paused");
    }

    @Test @Seed("003 advanceCheckpoint: owner-epoch compare-and-set")
    void aStaleAdvanceIsANoOpReturningFalse() {
        String p = EmbeddedPostgresSupport.partition("advance");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long first = Checkpoints.claim(storage, p, "proj", 1, 1).ownerEpoch();
        assertTrue(Checkpoints.advance(storage, p, "proj", first, 7, 70, 2));
        long second = Checkpoints.claim(storage, p, "proj", 1, 3).ownerEpoch();
        assertFalse(Checkpoints.advance(storage, p, "proj", first, 99, 990, 4), "the superseded owner");
        StoredCheckpoint cp = Checkpoints.read(storage, p).get(0);
        assertEquals(7, cp.watermark());
        assertEquals(70, cp.observedRows());
        assertEquals(second, cp.ownerEpoch());
        assertTrue(Checkpoints.advance(storage, p, "proj", second, 8, 80, 5));
        assertEquals(8, Checkpoints.read(storage, p).get(0).watermark());
    }

    @Test @Seed("seeds/001: the transaction variant rides in the backfill's write")
    void theTransactionAdvanceCommitsOrRollsBackWithTheWrite() {
        String p = EmbeddedPostgresSupport.partition("tx-advance");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        assertThrows(IllegalStateException.class, () -> storage.inTransaction(p, tx -> {
            assertTrue(tx.advanceCheckpoint("proj", epoch, 5, 50, 1));
            throw new IllegalStateException("the backfill write failed");
        }));
        assertEquals(0, Checkpoints.read(storage, p).get(0).watermark(), "rolled back with the write");
        boolean advanced = storage.inTransaction(p, tx -> tx.advanceCheckpoint("proj", epoch, 5, 50, 1));
        assertTrue(advanced);
        assertEquals(5, Checkpoints.read(storage, p).get(0).watermark());
        boolean superseded = storage.inTransaction(p, tx -> tx.advanceCheckpoint("proj", epoch + 1, 6, 60, 1));
        assertFalse(superseded);
    }

    @Test @Seed("003 sourceCoverageSeq / hasSourceChangesAbove")
    void coverageAndSourceChangesFollowTheLogAndTheHorizon() {
        String p = EmbeddedPostgresSupport.partition("coverage");
        assertEquals(0, Checkpoints.coverage(storage, p, SOURCES));
        push(p, "a");
        push(p, "b");
        assertEquals(2, Checkpoints.coverage(storage, p, SOURCES));
        assertEquals(0, Checkpoints.coverage(storage, p, List.of("other_table")));
        assertEquals(0, Checkpoints.coverage(storage, p, List.of()));
        assertEquals(SourceCoverage.CHANGED, Checkpoints.changesAbove(storage, p, SOURCES, 1));
        assertEquals(SourceCoverage.CLEAN, Checkpoints.changesAbove(storage, p, SOURCES, 2));
        assertEquals(SourceCoverage.CLEAN, Checkpoints.changesAbove(storage, p, List.of(), 0));
        storage.touchPartition(p, 0, "e");
        storage.pruneCommitsThrough(p, new CommitPruneQuery("e", 2));
        assertEquals(SourceCoverage.UNVERIFIABLE, Checkpoints.changesAbove(storage, p, SOURCES, 1),
                "a pruned window is never reported clean");
        assertEquals(SourceCoverage.CLEAN, Checkpoints.changesAbove(storage, p, SOURCES, 2));
    }

    @Test @Seed("003 activateCheckpoint: fence first")
    void activationWithoutTheFenceIsRefused() throws Exception {
        String p = EmbeddedPostgresSupport.partition("no-fence");
        assertEquals(StorageErrorCode.CHECKPOINT_FENCE_MISSING, assertThrows(StorageException.class,
                () -> storage.activateCheckpoint(p, "absent", 1, 0, SOURCES, 0)).code());
        PostgresCheckpoints.declare(db, p, "proj", 2, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 2, 0).ownerEpoch();
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE sync_writer_fence SET required_writer_version = 1 WHERE partition = ?")) {
            ps.setString(1, p);   // an operator lowered it by hand: the barrier no longer covers the checkpoint
            ps.executeUpdate();
        }
        assertEquals(StorageErrorCode.CHECKPOINT_FENCE_MISSING, assertThrows(StorageException.class,
                () -> storage.activateCheckpoint(p, "proj", epoch, 0, SOURCES, 0)).code());
        assertEquals(CheckpointState.BACKFILLING, Checkpoints.read(storage, p).get(0).state());
    }

    @Test @Seed("003 activateCheckpoint: a source change above the watermark is stale")
    void aLaterSourceChangeMakesActivationStale() {
        String p = EmbeddedPostgresSupport.partition("stale");
        push(p, "a");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        long watermark = Checkpoints.coverage(storage, p, SOURCES);
        push(p, "b");   // the source moved after the watermark was taken
        assertEquals(ActivationOutcome.STALE, storage.activateCheckpoint(p, "proj", epoch, watermark, SOURCES, 1));
        assertEquals(CheckpointState.BACKFILLING, Checkpoints.read(storage, p).get(0).state());
        assertEquals(ActivationOutcome.STALE, storage.activateCheckpoint(p, "proj", epoch + 1,
                Checkpoints.coverage(storage, p, SOURCES), SOURCES, 1), "a superseded owner epoch is stale too");
        assertEquals(ActivationOutcome.ACTIVATED, storage.activateCheckpoint(p, "proj", epoch,
                Checkpoints.coverage(storage, p, SOURCES), SOURCES, 2));
    }

    @Test @Seed("003 activateCheckpoint: unverifiable after pruning past the watermark; stale wins")
    void pruningPastTheWatermarkIsUnverifiableUnlessASourceChangeMakesItStale() {
        String p = EmbeddedPostgresSupport.partition("unverifiable");
        storage.touchPartition(p, 0, "e");
        push(p, "a");
        push(p, "b");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        storage.pruneCommitsThrough(p, new CommitPruneQuery("e", 2));
        assertEquals(ActivationOutcome.UNVERIFIABLE, storage.activateCheckpoint(p, "proj", epoch, 1, SOURCES, 1));
        push(p, "c");   // seq 3: now there IS a change above watermark 1, and the horizon (2) is past it as well
        assertEquals(ActivationOutcome.STALE, storage.activateCheckpoint(p, "proj", epoch, 1, SOURCES, 1));
        assertEquals(CheckpointState.BACKFILLING, Checkpoints.read(storage, p).get(0).state());
    }

    @Test @Seed("UPSTREAM-SERVER §3.4: activated is terminal")
    void activatedIsTerminalAndLeavesTheServeGate() {
        String p = EmbeddedPostgresSupport.partition("terminal");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        assertTrue(storage.readServeGate(p, 1).pending().stream().anyMatch(x -> x.partition().equals(p)));
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        assertEquals(ActivationOutcome.ACTIVATED, storage.activateCheckpoint(p, "proj", epoch, 0, SOURCES, 9));
        StoredCheckpoint cp = Checkpoints.read(storage, p).get(0);
        assertEquals(CheckpointState.ACTIVATED, cp.state());
        assertEquals(9, cp.updatedAtMs());
        assertEquals(ActivationOutcome.STALE, storage.activateCheckpoint(p, "proj", epoch, 0, SOURCES, 10));
        assertEquals(StorageErrorCode.CHECKPOINT_NOT_DECLARED, assertThrows(StorageException.class,
                () -> Checkpoints.claim(storage, p, "proj", 1, 0)).code());
        assertEquals(cp, PostgresCheckpoints.declare(db, p, "proj", 1, 11), "a re-declare never resurrects it");
        assertFalse(storage.readServeGate(p, 1).pending().stream().anyMatch(x -> x.partition().equals(p)));
    }

    @Test @Timeout(30) @Seed("003: activation takes the same partition lock as a push")
    void activationWaitsForAPushHoldingThePartitionLock() throws Exception {
        String p = EmbeddedPostgresSupport.partition("act-lock");
        PostgresCheckpoints.declare(db, p, "proj", 1, 0);
        long epoch = Checkpoints.claim(storage, p, "proj", 1, 0).ownerEpoch();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection holder = db.rawConnection()) {
            holder.setAutoCommit(false);
            CompletableFuture<ActivationOutcome> activation = storage.runUnit(holder, p, false, push -> {
                push.lockPartitionForPush();
                CompletableFuture<ActivationOutcome> waiting = CompletableFuture.supplyAsync(
                        () -> storage.activateCheckpoint(p, "proj", epoch, 0, SOURCES, 1), pool);
                try {
                    LockWaits.awaitLockWaiters(db, 1, 10_000);
                } catch (SQLException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                assertFalse(waiting.isDone());
                StoredRow row = TestSchemas.taskRow(schema, "late", "p1", 1);
                push.upsertRow("tasks", row, 0);
                push.appendCommit(TestSchemas.upsertCommit("late", row));   // a source change the activation must see
                push.putPushResult("client-1", "late", StoredPushResult.applied(1, List.of()));
                return waiting;
            });
            holder.commit();
            assertEquals(ActivationOutcome.STALE, activation.get(10, SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test @Seed("STYLE §6.6: one backfill runner per batch, transaction-scoped")
    void aBackfillBatchLockElectsOneRunnerAndEndsWithItsTransaction() throws Exception {
        String p = EmbeddedPostgresSupport.partition("batch");
        try (Connection first = db.rawConnection(); Connection second = db.rawConnection()) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            // each unit leaves its transaction open, and its transaction-scoped locks held
            boolean firstHeld = storage.runUnit(first, p, false, a -> a.tryLockBackfillBatch("proj"));
            assertTrue(firstHeld);
            storage.runUnit(second, p, false, b -> {
                assertFalse(b.tryLockBackfillBatch("proj"), "another runner holds this batch");
                assertTrue(b.tryLockBackfillBatch("other-proj"), "other checkpoints are independent");
                return null;
            });
            boolean third = storage.inTransaction(p, tx -> tx.tryLockBackfillBatch("proj"));
            assertFalse(third);
            first.commit();   // the lock ends with its transaction: nothing leaks into the pooled session
            assertEquals(0L, advisoryLocksOf(first));
            boolean afterRelease = storage.inTransaction(p, tx -> tx.tryLockBackfillBatch("proj"));
            assertTrue(afterRelease);
            second.rollback();
        }
    }

    private long advisoryLocksOf(Connection c) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")) {
            var rs = ps.executeQuery();
            rs.next();
            long n = rs.getLong(1);
            c.commit();
            return n;
        }
    }

    @Test @Seed("003 ensureSchema barrier: checkpoint_incomplete")
    void anUndeclaredPendingCheckpointAtTheRunningVersionRefusesEnsureSchema() {
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try (own) {
            PostgresServerStorage first = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            first.ensureSchema(schema, List.of());
            PostgresCheckpoints.declare(own, "p1", "proj", 1, 0);
            PostgresServerStorage other = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            StorageException e = assertThrows(StorageException.class, () -> other.ensureSchema(schema, List.of()));
            assertEquals(StorageErrorCode.CHECKPOINT_INCOMPLETE, e.code());
            assertEquals(0, other.writerVersion(), "a refused ensureSchema memoizes nothing");
            other.ensureSchema(schema, List.of(new CheckpointDeclaration("p1", "proj", 1)));
            assertEquals(1, other.writerVersion());
            long epoch = Checkpoints.claim(first, "p1", "proj", 1, 0).ownerEpoch();
            first.activateCheckpoint("p1", "proj", epoch, 0, SOURCES, 0);
            new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L).ensureSchema(schema, List.of());
        }
    }
}

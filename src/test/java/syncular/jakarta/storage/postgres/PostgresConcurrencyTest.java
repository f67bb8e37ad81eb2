package syncular.jakarta.storage.postgres;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;

/**
 * Real threads on real connections (STYLE §6.12): the commit log stays dense under contention, and the partition
 * lock serializes one partition without touching another.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresConcurrencyTest {
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

    /** The batched form: lock with prefetch, then writes, append and result in one round trip. */
    private long pushBatched(String p, String commitId, StoredRow row) {
        return storage.inTransaction(p, tx -> {
            tx.lockForPush(1, List.of(new PushKey("client-1", commitId)), List.of(new RowKey("tasks", row.rowId())), false);
            return tx.applyCommit(List.of(new RowWrite.Upsert("tasks", row, 0)),
                    TestSchemas.upsertCommit(commitId, row), StoredPushResult.applied(0, List.of()));
        });
    }

    private long pushOne(String p, String commitId, StoredRow row) {
        return storage.inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row, 0);
            long seq = tx.appendCommit(TestSchemas.upsertCommit(commitId, row));
            tx.putPushResult("client-1", commitId, StoredPushResult.applied(seq, List.of()));
            return seq;
        });
    }

    @Test @Timeout(60) @Seed("SPEC §2.1, §6.1: dense, gap-free commitSeq under concurrency")
    void eightWritersTimesFiveHundredCommitsGiveExactlyOneToFourThousand() throws Exception {
        String p = EmbeddedPostgresSupport.partition("dense");
        int writers = 8;
        int perWriter = 500;
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<List<Long>> seqs = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            List<Long> mine = new ArrayList<>();
            seqs.add(mine);
            pool.submit(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perWriter; i++) {
                        String id = "w" + writer + "-" + i;
                        StoredRow row = TestSchemas.taskRow(schema, id, "p" + (i % 10), 1);
                        // half the writers use the long form, half the batched one: both under contention
                        mine.add(writer % 2 == 0 ? pushOne(p, id, row) : pushBatched(p, id, row));
                    }
                } catch (Throwable t) {
                    firstFailure.compareAndSet(null, t);
                }
            });
        }
        start.countDown();
        pool.shutdown();
        assertTrue(pool.awaitTermination(55, SECONDS), "writers did not finish");
        assertNull(firstFailure.get(), () -> "a writer failed: " + firstFailure.get());

        int total = writers * perWriter;
        List<Long> returned = seqs.stream().flatMap(List::stream).sorted().toList();
        assertEquals(total, returned.size());
        for (int i = 0; i < total; i++) assertEquals(i + 1, returned.get(i), "returned seqs are 1..N, each once");
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("""
                SELECT count(*), count(DISTINCT commit_seq), min(commit_seq), max(commit_seq),
                       (SELECT count(*) FROM sync_changes WHERE partition = ?),
                       (SELECT max_commit_seq FROM sync_partitions WHERE partition = ?),
                       (SELECT count(*) FROM sync_push_results WHERE partition = ?
                           AND (result->>'commitSeq')::bigint BETWEEN 1 AND 4000)
                  FROM sync_commits WHERE partition = ?""")) {
            ps.setString(1, p);
            ps.setString(2, p);
            ps.setString(3, p);
            ps.setString(4, p);
            ResultSet rs = ps.executeQuery();
            rs.next();
            assertEquals(total, rs.getLong(1));
            assertEquals(total, rs.getLong(2));
            assertEquals(1, rs.getLong(3));
            assertEquals(total, rs.getLong(4));
            assertEquals(total, rs.getLong(5));
            assertEquals(total, rs.getLong(6));
            assertEquals(total, rs.getLong(7), "every commit stored its result with its own seq");
        }
        // each writer's own commits are in its program order: the lock serializes, never reorders a writer
        for (List<Long> mine : seqs) {
            for (int i = 1; i < mine.size(); i++) assertTrue(mine.get(i - 1) < mine.get(i));
        }
    }

    @Test @Timeout(30) @Seed("SPEC-DIGEST §8.1: the lock is per partition")
    void aHeldPartitionLockBlocksItsOwnPartitionButNotAnother() throws Exception {
        String a = EmbeddedPostgresSupport.partition("held");
        String b = EmbeddedPostgresSupport.partition("free");
        pushOne(a, "a0", TestSchemas.taskRow(schema, "a0", "p1", 1));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Connection holder = db.rawConnection()) {
            holder.setAutoCommit(false);
            storage.runUnit(holder, a, false, held -> {
                held.lockPartitionForPush();   // A's row lock, uncommitted: the unit leaves the transaction open
                return null;
            });

            long bSeq = CompletableFuture.supplyAsync(
                    () -> pushOne(b, "b1", TestSchemas.taskRow(schema, "b1", "p1", 1)), pool).get(10, SECONDS);
            assertEquals(1, bSeq, "partition B committed while A's lock was held");

            CompletableFuture<Long> waitingOnA = CompletableFuture.supplyAsync(
                    () -> pushOne(a, "a1", TestSchemas.taskRow(schema, "a1", "p1", 1)), pool);
            LockWaits.awaitLockWaiters(db, 1, 10_000);
            assertFalse(waitingOnA.isDone(), "a second writer of A waits for the lock");

            holder.commit();   // release A
            assertEquals(2, waitingOnA.get(10, SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test @Timeout(60) @Seed("issue 13: a push's wait for its partition lock is bounded")
    void aPushThatCannotGetThePartitionLockInTimeFailsLockNotAvailableAndKeepsNothing() throws Exception {
        PostgresServerStorage bounded = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L, 200,
                PostgresServerStorage.DEFAULT_TOUCH_INTERVAL_MS);
        bounded.ensureSchema(schema, List.of());
        String a = EmbeddedPostgresSupport.partition("timeout");
        pushOne(a, "t0", TestSchemas.taskRow(schema, "t0", "p1", 1));
        try (Connection holder = db.rawConnection()) {
            holder.setAutoCommit(false);
            storage.runUnit(holder, a, false, held -> {
                held.lockPartitionForPush();   // somebody holds A's lock and does not let go
                return null;
            });

            syncular.jakarta.storage.StorageException e = org.junit.jupiter.api.Assertions.assertThrows(
                    syncular.jakarta.storage.StorageException.class, () -> bounded.inTransaction(a, tx -> {
                        tx.lockPartitionForPush();
                        tx.upsertRow("tasks", TestSchemas.taskRow(schema, "t1", "p1", 1), 0);
                        return null;
                    }));
            assertEquals(syncular.jakarta.storage.StorageErrorCode.LOCK_NOT_AVAILABLE, e.code());
            holder.commit();
        }
        assertEquals(1, storage.getMaxCommitSeq(a), "nothing of the timed-out push was appended");
        assertTrue(storage.inTransaction(a, tx -> tx.getRow("tasks", "t1")).isEmpty(), "nor written");
        // the lock timeout is the push transaction's own (SET LOCAL): a later push of the same storage waits normally
        assertEquals(2L, (long) storage.inTransaction(a, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", TestSchemas.taskRow(schema, "t2", "p1", 1), 0);
            long seq = tx.appendCommit(TestSchemas.upsertCommit("t2", TestSchemas.taskRow(schema, "t2", "p1", 1)));
            tx.putPushResult("client-1", "t2", StoredPushResult.applied(seq, List.of()));
            return seq;
        }));
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;

/**
 * Group commit (issue 14): requests of one partition that queue while a group is applied are applied together, in
 * one transaction under one lock acquisition, each commit on its own savepoint; a rejection costs only its own
 * commit, an infrastructure failure of the group is retried request by request. Made deterministic by holding the
 * partition lock from outside until every request is queued (a queued request parks: {@code WAITING}).
 */
class PushGroupTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    private static PushCommit upsert(String commitId, String rowId, Long baseVersion) {
        return new PushCommit(commitId, List.of(PushCommit.Operation.upsert("tasks", rowId, baseVersion,
                TestSchemas.taskPayload(SCHEMA, rowId, "p1", "title " + commitId, false))));
    }

    /** A storage whose transactions are counted; {@code failOn}: the commit whose append fails as a database fault would. */
    private static ServerStorage counted(AtomicInteger transactions, String failOn) {
        return StorageHooks.transactionsThrough(storage, tx -> {
            transactions.incrementAndGet();
            return StorageHooks.calls(tx, (method, args) -> {
                if (method.equals("applyCommit") && failOn != null
                        && ((syncular.jakarta.storage.NewCommit) args[1]).clientCommitId().equals(failOn)) {
                    throw new StorageException(StorageErrorCode.UNCLASSIFIED);
                }
            });
        });
    }

    /**
     * Pushes {@code first} (the leader, which waits for the partition lock held here), then {@code queued} from
     * threads of their own once the leader waits, releases the lock when all of them are queued, and returns every
     * request's result by commit id.
     */
    private static Map<String, PushProcessor.Pushed> pushGrouped(PushProcessor push, String partition,
                                                                 PushCommit first, List<PushCommit> queued)
            throws Exception {
        Map<String, PushProcessor.Pushed> results = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        try (Connection holder = db.rawConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement("INSERT INTO sync_partitions(partition, "
                    + "max_commit_seq) VALUES (?, 0) ON CONFLICT DO NOTHING; SELECT 1 FROM sync_partitions "
                    + "WHERE partition = ? FOR UPDATE")) {
                ps.setString(1, partition);
                ps.setString(2, partition);
                ps.execute();
            }
            List<PushCommit> all = new ArrayList<>();
            all.add(first);
            all.addAll(queued);
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (int i = 0; i < all.size(); i++) {
                PushCommit commit = all.get(i);
                // one client per commit id: a repeated id is the same client's retry racing its original
                String client = "client-" + commit.clientCommitId();
                String key = seen.add(commit.clientCommitId()) ? commit.clientCommitId()
                        : commit.clientCommitId() + "#" + i;
                Thread t = new Thread(() -> results.put(key, push.push(new PushProcessor.Batch(
                        new PushProcessor.RequestScope(new Identity("actor-1", partition), client, 2), SCHEMA, ALL,
                        List.of(commit), underLock -> { }))));
                threads.add(t);
                t.start();
                if (i == 0) {
                    awaitLockWaiter(partition);
                } else {
                    // queued in this order: the next one starts only once this one waits behind the leader
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    while (t.getState() != Thread.State.WAITING && System.nanoTime() < deadline) Thread.sleep(5);
                    assertEquals(Thread.State.WAITING, t.getState(), "a request queued behind the leader");
                }
            }
            holder.commit();
        }
        for (Thread t : threads) t.join(20_000);
        return results;
    }

    private static void awaitLockWaiter(String partition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%sync_partitions%'")) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) return;
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the leader never waited for the partition lock");
    }

    private static PushResult result(Map<String, PushProcessor.Pushed> results, String commitId) {
        PushProcessor.Pushed p = results.get(commitId);
        assertEquals(null, p.failure(), () -> commitId + ": " + p.failure());
        return p.outcomes().get(0).result();
    }

    /** Each of {@code ids} applied, their seqs exactly 1..n (dense, gap-free), and the partition's head at n. */
    private static void assertAppliedWithDenseSeqs(Map<String, PushProcessor.Pushed> results, String partition,
                                                   String... ids) {
        List<Long> seqs = new ArrayList<>();
        List<Long> expected = new ArrayList<>();
        for (String id : ids) {
            assertEquals(PushResult.Status.APPLIED, result(results, id).status(), id);
            seqs.add(result(results, id).commitSeq());
            expected.add((long) expected.size() + 1);
        }
        assertEquals(expected, seqs.stream().sorted().toList(), "dense, gap-free seqs: " + seqs);
        assertEquals(ids.length, storage.getMaxCommitSeq(partition));
    }

    @Test @Timeout(60)
    void requestsQueuedBehindALeaderAreAppliedAsOneGroupWithDenseSeqsAndOneRejectionCostsOnlyItsCommit()
            throws Exception {
        String partition = EmbeddedPostgresSupport.partition("group");
        AtomicInteger transactions = new AtomicInteger();
        PushProcessor push = new PushProcessor(counted(transactions, null), () -> 1_000L, Validation.NONE, 1000);
        // g2 and g4 write the same row: g4 sees g2's write (version 1) within the group; g3 expects a version the
        // row does not have yet and is rejected on its own savepoint
        Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("g0", "r0", null), List.of(
                upsert("g1", "r1", null), upsert("g2", "shared", null), upsert("g3", "r3", 7L),
                upsert("g4", "shared", 1L), upsert("g1", "r1", null)));
        assertEquals(2, transactions.get(), "the leader's group, then one group of everything queued behind it");
        assertEquals(PushResult.Status.APPLIED, result(results, "g0").status());
        assertEquals(PushResult.Status.REJECTED, result(results, "g3").status());
        for (String id : List.of("g1", "g2", "g4")) {
            assertTrue(result(results, id).status() != PushResult.Status.REJECTED, id);
        }
        List<Long> seqs = new ArrayList<>();
        for (String id : List.of("g0", "g1", "g2", "g4")) seqs.add(result(results, id).commitSeq());
        assertEquals(List.of(1L, 2L, 3L, 4L), seqs.stream().sorted().toList(), "dense, gap-free seqs: " + seqs);
        assertEquals(4, storage.getMaxCommitSeq(partition));
        assertEquals(2, Reads.row(storage, partition, "tasks", "shared").orElseThrow().serverVersion(),
                "the second write of the row in the group built on the first");
        assertTrue(Reads.row(storage, partition, "tasks", "r3").isEmpty(), "the rejected commit wrote nothing");
        assertEquals(StoredStatus.REJECTED, StoredStatus.of(storage, partition, "client-g3", "g3"));
        PushResult retry = result(results, "g1#5");
        assertEquals(PushResult.Status.CACHED, retry.status(), "the retry in the same group is answered from its original");
        assertEquals(result(results, "g1").commitSeq(), retry.commitSeq());
    }

    @Test @Timeout(60)
    void aGroupCostsThreeRoundTripsWhateverItsSize() throws Exception {
        RoundTripBudgetTest.Counting counting = new RoundTripBudgetTest.Counting(db);
        PostgresServerStorage over = new PostgresServerStorage(counting, new JdbcTransactionRunner(counting),
                () -> 1_000L);
        over.ensureSchema(SCHEMA, List.of());
        String partition = EmbeddedPostgresSupport.partition("group-rt");
        PushProcessor push = new PushProcessor(over, () -> 1_000L, Validation.NONE, 1000);
        counting.reset();
        List<PushCommit> queued = new ArrayList<>();
        for (int i = 1; i <= 6; i++) queued.add(upsert("s" + i, "r" + i, null));
        Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("s0", "r0", null), queued);
        for (int i = 0; i <= 6; i++) assertEquals(PushResult.Status.APPLIED, result(results, "s" + i).status());
        assertEquals(2, counting.commits.get(), "the leader alone, then one group of the six queued behind it");
        assertEquals(6, counting.roundTrips.get(), "per group: lock and reads, every write, COMMIT");
        assertEquals(7, storage.getMaxCommitSeq(partition));
    }

    @Test @Timeout(60)
    void aGroupWritesItsHeadOnceAndSignalsTheFeedOnceEvenWhenItsLastCommitIsRejected() throws Exception {
        String partition = EmbeddedPostgresSupport.partition("group-head");
        PushProcessor push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
        try (Connection listener = db.rawConnection()) {
            try (java.sql.Statement st = listener.createStatement()) {
                st.execute("LISTEN " + syncular.jakarta.storage.postgres.PostgresCommitFeed.CHANNEL);
            }
            // h3 expects a version its row does not have: the group's last candidate is rejected, so the head
            // is written back after it, before the group commits
            Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("h0", "r0", null),
                    List.of(upsert("h1", "r1", null), upsert("h2", "r2", null), upsert("h3", "r3", 7L)));
            assertEquals(PushResult.Status.REJECTED, result(results, "h3").status());
            assertEquals(3, storage.getMaxCommitSeq(partition));
            PushProcessor.Pushed next = push.push(new PushProcessor.Batch(new PushProcessor.RequestScope(
                    new Identity("actor-1", partition), "client-h4", 2), SCHEMA, ALL,
                    List.of(upsert("h4", "r4", null)), underLock -> { }));
            assertEquals(4, next.outcomes().get(0).result().commitSeq(), "the next group numbers on from the head");
            assertEquals(4, storage.getMaxCommitSeq(partition));
            List<String> notices = new ArrayList<>();
            org.postgresql.PGConnection pg = listener.unwrap(org.postgresql.PGConnection.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (notices.size() < 3 && System.nanoTime() < deadline) {
                org.postgresql.PGNotification[] got = pg.getNotifications(200);
                if (got == null) continue;
                for (org.postgresql.PGNotification n : got) {
                    if (n.getParameter().startsWith(partition + ":")) notices.add(n.getParameter());
                }
            }
            assertEquals(List.of(partition + ":1", partition + ":3", partition + ":4"), notices,
                    "one notice per group, for its head: the feed reports every seq up to it");
        }
    }

    @Test @Timeout(60)
    void aWriteTheDatabaseRefusesInAGroupRejectsOnlyItsCommitAtItsOperation() throws Exception {
        String partition = EmbeddedPostgresSupport.partition("group-refused");
        try (Connection c = db.getConnection(); java.sql.Statement st = c.createStatement()) {
            st.execute("ALTER TABLE tasks DROP CONSTRAINT IF EXISTS no_bad_titles");
            st.execute("ALTER TABLE tasks ADD CONSTRAINT no_bad_titles CHECK (title <> 'bad')");
        }
        try {
            PushProcessor push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
            // the group's writes travel in one round trip; the database refuses c2's second operation there, so
            // the group runs again with each write sent at once, which names the operation
            PushCommit bad = new PushCommit("c2", List.of(
                    PushCommit.Operation.upsert("tasks", "ok2", null,
                            TestSchemas.taskPayload(SCHEMA, "ok2", "p1", "fine", false)),
                    PushCommit.Operation.upsert("tasks", "bad2", null,
                            TestSchemas.taskPayload(SCHEMA, "bad2", "p1", "bad", false))));
            Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("c0", "r0", null),
                    List.of(upsert("c1", "r1", null), bad, upsert("c3", "r3", null)));
            PushResult rejected = result(results, "c2");
            assertEquals(PushResult.Status.REJECTED, rejected.status());
            PushResult.OpResult failed = rejected.results().get(rejected.results().size() - 1);
            assertTrue(failed instanceof PushResult.OpError, rejected::toString);
            assertEquals(1, failed.opIndex(), "the refused operation, not its commit's first");
            assertEquals(ErrorCode.SYNC_CONSTRAINT_VIOLATION.wire(), ((PushResult.OpError) failed).code());
            assertAppliedWithDenseSeqs(results, partition, "c0", "c1", "c3");
            assertTrue(Reads.row(storage, partition, "tasks", "ok2").isEmpty(), "nothing of the rejected commit");
            assertEquals(StoredStatus.REJECTED, StoredStatus.of(storage, partition, "client-c2", "c2"));
        } finally {
            try (Connection c = db.getConnection(); java.sql.Statement st = c.createStatement()) {
                st.execute("ALTER TABLE tasks DROP CONSTRAINT IF EXISTS no_bad_titles");
            }
        }
    }

    @Test @Timeout(60)
    void withValidatorsAGroupWritesEagerlyAndAVetoRollsBackOnlyItsCommit() throws Exception {
        String partition = EmbeddedPostgresSupport.partition("group-veto");
        // the validator reads the candidate state, so these commits write at once (each behind its own savepoint)
        // while their appends are staged: the vetoed commit's rollback must keep the earlier commit's staged append
        syncular.jakarta.host.RowValidator veto = new syncular.jakarta.host.RowValidator() {
            @Override public boolean handles(String table) { return table.equals("tasks"); }

            @Override
            public void validate(syncular.jakarta.host.ValidatedOperation op,
                                 syncular.jakarta.host.ValidationContext context) {
                if ("veto".equals(op.row().get("title"))) {
                    throw new syncular.jakarta.host.ValidationRejection("app.vetoed", "vetoed");
                }
            }
        };
        PushProcessor push = new PushProcessor(storage, () -> 1_000L, new Validation(() -> List.of(veto), List::of), 1000);
        PushCommit vetoed = new PushCommit("v2", List.of(
                PushCommit.Operation.upsert("tasks", "written-first", null,
                        TestSchemas.taskPayload(SCHEMA, "written-first", "p1", "fine", false)),
                PushCommit.Operation.upsert("tasks", "vetoed-row", null,
                        TestSchemas.taskPayload(SCHEMA, "vetoed-row", "p1", "veto", false))));
        Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("v0", "r0", null),
                List.of(upsert("v1", "r1", null), vetoed, upsert("v3", "r3", null)));
        PushResult rejected = result(results, "v2");
        assertEquals(PushResult.Status.REJECTED, rejected.status());
        assertEquals(1, rejected.results().get(rejected.results().size() - 1).opIndex());
        assertAppliedWithDenseSeqs(results, partition, "v0", "v1", "v3");
        for (String row : List.of("r0", "r1", "r3")) {
            assertTrue(Reads.row(storage, partition, "tasks", row).isPresent(), row);
        }
        assertTrue(Reads.row(storage, partition, "tasks", "written-first").isEmpty(),
                "the vetoed commit's write made before the veto is rolled back");
        assertEquals(StoredStatus.REJECTED, StoredStatus.of(storage, partition, "client-v2", "v2"));
        assertEquals(StoredStatus.APPLIED, StoredStatus.of(storage, partition, "client-v1", "v1"));
    }

    @Test @Timeout(60)
    void anInfrastructureFailureOfAGroupIsRetriedRequestByRequestAndFailsOnlyItsOwn() throws Exception {
        String partition = EmbeddedPostgresSupport.partition("group-fail");
        AtomicInteger transactions = new AtomicInteger();
        PushProcessor push = new PushProcessor(counted(transactions, "boom"), () -> 1_000L, Validation.NONE, 1000);
        Map<String, PushProcessor.Pushed> results = pushGrouped(push, partition, upsert("f0", "r0", null), List.of(
                upsert("f1", "r1", null), upsert("boom", "rb", null), upsert("f3", "r3", null)));
        assertEquals(1 + 1 + 3, transactions.get(), "the leader's, the failed group's, then one per request");
        PushProcessor.Pushed boom = results.get("boom");
        assertTrue(boom.outcomes().isEmpty());
        assertSame(StorageErrorCode.UNCLASSIFIED, ((StorageException) boom.failure()).code());
        for (String id : List.of("f0", "f1", "f3")) assertEquals(PushResult.Status.APPLIED, result(results, id).status());
        assertEquals(3, storage.getMaxCommitSeq(partition), "the failed group left no gap");
        assertFalse(Reads.pushResult(storage, partition, "client-boom", "boom").isPresent(), "nothing stored for it");
    }

    @Test @Timeout(60)
    void aPushThatCannotGetTheLockInTimeIsRateLimitedForEveryRequestOfItsGroup() throws Exception {
        PostgresServerStorage bounded = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L,
                200, 0);
        bounded.ensureSchema(SCHEMA, List.of());
        String partition = EmbeddedPostgresSupport.partition("group-timeout");
        PushProcessor push = new PushProcessor(bounded, () -> 1_000L, Validation.NONE, 1000);
        try (Connection holder = db.rawConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement("INSERT INTO sync_partitions(partition, "
                    + "max_commit_seq) VALUES (?, 0) ON CONFLICT DO NOTHING; SELECT 1 FROM sync_partitions "
                    + "WHERE partition = ? FOR UPDATE")) {
                ps.setString(1, partition);
                ps.setString(2, partition);
                ps.execute();
            }
            PushProcessor.Pushed p = push.push(new PushProcessor.Batch(new PushProcessor.RequestScope(
                    new Identity("actor-1", partition), "client-1", 2), SCHEMA, ALL,
                    List.of(upsert("t1", "r1", null), upsert("t2", "r2", null)), underLock -> { }));
            assertEquals(ErrorCode.SYNC_RATE_LIMITED, ((SyncException) p.failure()).code());
            assertTrue(p.outcomes().isEmpty());
            holder.rollback();
        }
        assertEquals(0, storage.getMaxCommitSeq(partition));
    }

    /** The stored status of a push result, read back from the database. */
    private enum StoredStatus {
        APPLIED, REJECTED, ABSENT;

        static StoredStatus of(ServerStorage s, String partition, String client, String commitId) {
            return Reads.pushResult(s, partition, client, commitId)
                    .map(r -> r.status() == syncular.jakarta.storage.StoredPushResult.Status.APPLIED ? APPLIED
                            : REJECTED).orElse(ABSENT);
        }
    }

}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.CommitFeed;
import syncular.jakarta.storage.CommitWindow;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.PostgresServerStorage;

/**
 * The log's recent tail in memory (issue 15): a window it answers is the window the database answers (same commits,
 * changes, cut), and it answers only windows it holds whole, of its own log epoch.
 */
class RecentCommitsTest {
    private static final ScopeFilter P1 = ScopeFilter.of("project_id", "p1");

    @Test
    void aWindowWithinTheTailIsTheWindowTheDatabaseReads() {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1L);
            storage.ensureSchema(TestSchemas.tasks(1), List.of());
            String partition = EmbeddedPostgresSupport.partition("recent");
            String epoch = storage.touchPartition(partition, 1L, "epoch-1").logEpoch();
            Random random = new Random(15);
            int n = 120;
            for (int i = 0; i < n; i++) {
                List<StoredChange> changes = new ArrayList<>();
                int size = 1 + random.nextInt(4);
                for (int c = 0; c < size; c++) changes.add(randomChange(random, i + "-" + c));
                storage.inTransaction(partition, tx -> {
                    tx.lockPartitionForPush();
                    return tx.appendCommit(new NewCommit("client-" + random.nextInt(3), "c" + changes.hashCode(),
                            "actor-" + random.nextInt(3), 1_000L + random.nextInt(50), changes),
                            StoredPushResult.applied(0, List.of()));
                });
            }
            PostgresCommitFeed feed = new PostgresCommitFeed(() -> db.getConnection(), db, 50, 500);
            RecentCommits recent = new RecentCommits(16L << 20);
            for (long seq = 1; seq <= n; seq++) {
                CommitFeed.CommitRead read = feed.readCommit(partition, seq).orElseThrow();
                assertEquals(epoch, read.logEpoch());
                recent.committed(partition, read.logEpoch(), read.commit());
            }
            int nonEmpty = 0;
            try (StorageSession session = storage.openSession(partition)) {
                for (int q = 0; q < 400; q++) {
                    long after = random.nextInt(n + 1);
                    long through = after + random.nextInt((int) (n - after) + 1);
                    CommitWindowQuery query = randomQuery(random, after, through);
                    CommitWindow fromMemory = recent.window(partition, epoch, query).orElseThrow();
                    CommitWindow fromLog = session.readCommitWindow(query, Optional.empty());
                    assertEquals(render(fromLog.commits()), render(fromMemory.commits()), query.toString());
                    assertEquals(-1, fromMemory.horizonSeq(), "no horizon read");
                    if (!fromMemory.commits().isEmpty()) nonEmpty++;
                }
            }
            assertTrue(nonEmpty > 100, "the queries hit commits: " + nonEmpty);
        }
    }

    private static StoredChange randomChange(Random random, String id) {
        boolean delete = random.nextInt(5) == 0;
        Map<String, String> scopes = new TreeMap<>();
        String table;
        if (random.nextBoolean()) {
            table = "tasks";
            scopes.put("project_id", "p" + (1 + random.nextInt(3)));
        } else {
            table = "notes";
            scopes.put("org_id", "o" + (1 + random.nextInt(2)));
            scopes.put("owner_id", "u" + (1 + random.nextInt(3)));
        }
        return delete ? StoredChange.delete(table, "r" + id, scopes)
                : StoredChange.upsert(table, "r" + id, 1 + random.nextInt(9), scopes, ("row " + id).getBytes());
    }

    private static CommitWindowQuery randomQuery(Random random, long after, long through) {
        Map<String, List<String>> scopes = new TreeMap<>();
        String table = random.nextBoolean() ? "tasks" : "notes";
        if (table.equals("tasks")) {
            scopes.put("project_id", subset(random, "p", 4));
        } else {
            int shape = random.nextInt(3);
            if (shape != 1) scopes.put("org_id", subset(random, "o", 3));
            if (shape != 0) scopes.put("owner_id", subset(random, "u", 4));
        }
        return new CommitWindowQuery(table, new ScopeFilter(scopes), after, through, 1 + random.nextInt(10));
    }

    /** Values {@code prefix1 … prefixN}, each in with even odds (now and then none). */
    private static List<String> subset(Random random, String prefix, int n) {
        List<String> values = new ArrayList<>();
        for (int i = 1; i <= n; i++) if (random.nextBoolean()) values.add(prefix + i);
        return values;
    }

    private static String render(List<StoredCommit> commits) {
        StringBuilder b = new StringBuilder();
        for (StoredCommit c : commits) {
            b.append(c.commitSeq()).append(' ').append(c.createdAtMs()).append(' ').append(c.actorId()).append('\n');
            for (StoredChange ch : c.changes()) {
                b.append("  ").append(ch.table()).append(' ').append(ch.rowId()).append(' ').append(ch.op())
                        .append(' ').append(ch.rowVersion()).append(' ').append(ch.scopes()).append(' ')
                        .append(ch.op() == ChangeOp.UPSERT ? HexFormat.of().formatHex(ch.payload()) : "-")
                        .append('\n');
            }
        }
        return b.toString();
    }

    private static StoredCommit commit(long seq, String table, String project) {
        return new StoredCommit(seq, seq, "a", List.of(StoredChange.upsert(table, "r" + seq, seq,
                TestSchemas.scopes("project_id", project), new byte[] {(byte) seq})));
    }

    private static List<Long> seqs(Optional<CommitWindow> window) {
        return window.orElseThrow().commits().stream().map(StoredCommit::commitSeq).toList();
    }

    @Test
    void onlyAWindowTheTailHoldsWholeIsAnswered() {
        RecentCommits recent = new RecentCommits(1 << 20);
        for (long s = 5; s <= 9; s++) recent.committed("p", "e", commit(s, "tasks", "p1"));
        assertEquals(List.of(6L, 7L, 8L, 9L), seqs(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 5, 9,
                100))));
        assertEquals(List.of(5L, 6L), seqs(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 4, 6, 100))));
        assertTrue(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 3, 6, 100)).isEmpty(),
                "seq 4 is not held");
        assertTrue(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 5, 10, 100)).isEmpty(),
                "seq 10 is not held");
        assertTrue(recent.window("p", "other", new CommitWindowQuery("tasks", P1, 5, 9, 100)).isEmpty(),
                "another log epoch");
        assertTrue(recent.window("q", "e", new CommitWindowQuery("tasks", P1, 5, 9, 100)).isEmpty(),
                "another partition");
        // a client at the head needs no tail at all
        assertEquals(List.of(), seqs(recent.window("q", "e", new CommitWindowQuery("tasks", P1, 12, 12, 100))));
        // the cut: whole commits until the change count is reached
        assertEquals(List.of(6L, 7L), seqs(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 5, 9, 2))));
    }

    @Test
    void aCommitThatDoesNotFollowTheTailOrComesUnderAnotherEpochStartsItAfresh() {
        RecentCommits recent = new RecentCommits(1 << 20);
        for (long s = 1; s <= 3; s++) recent.committed("p", "e", commit(s, "tasks", "p1"));
        recent.committed("p", "e", commit(5, "tasks", "p1"));   // 4 was missed
        assertTrue(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 2, 5, 100)).isEmpty());
        assertEquals(List.of(5L), seqs(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 4, 5, 100))));
        recent.committed("p", "e2", commit(6, "tasks", "p1"));   // a rotated log
        assertTrue(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 5, 6, 100)).isEmpty());
        assertTrue(recent.window("p", "e2", new CommitWindowQuery("tasks", P1, 4, 6, 100)).isEmpty());
        assertEquals(List.of(6L), seqs(recent.window("p", "e2", new CommitWindowQuery("tasks", P1, 5, 6, 100))));
        recent.committed("p", "e2", commit(3, "tasks", "p1"));   // the log went back (a wipe): seq 3 again
        assertTrue(recent.window("p", "e2", new CommitWindowQuery("tasks", P1, 5, 6, 100)).isEmpty());
        recent.forget("p");
        assertTrue(recent.window("p", "e2", new CommitWindowQuery("tasks", P1, 2, 3, 100)).isEmpty());
        assertEquals(0, recent.bytes());
    }

    /**
     * Whether a scope saw no change between two seqs, for a bootstrap at the second that could reuse pages published
     * at the first (issue 15): only a tail that holds the range can say so; one that has not yet been given the
     * range's end is waited for, a bounded time.
     */
    @Test
    void aScopeIsUnchangedOnlyWhereTheTailHoldsTheRangeAndTheEndIsWaitedFor() throws Exception {
        RecentCommits recent = new RecentCommits(1 << 20);
        for (long s = 1; s <= 3; s++) recent.committed("p", "e", commit(s, "tasks", "p2"));
        recent.committed("p", "e", commit(4, "tasks", "p1"));
        assertTrue(recent.unchanged("p", "e", "tasks", P1, 0, 3, 0), "only p2 changed through 3");
        assertFalse(recent.unchanged("p", "e", "tasks", P1, 2, 4, 0), "p1 changed at 4");
        assertTrue(recent.unchanged("p", "e", "other", P1, 0, 4, 0), "another table");
        assertFalse(recent.unchanged("p", "e2", "tasks", P1, 0, 3, 0), "another log epoch");
        assertFalse(recent.unchanged("q", "e", "tasks", P1, 0, 3, 0), "no tail");
        assertFalse(recent.unchanged("p", "e", "tasks", P1, 0, 5, 0), "5 not given: nothing to wait for, no answer");

        Thread feed = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            recent.committed("p", "e", commit(5, "tasks", "p2"));
        });
        feed.start();
        assertTrue(recent.unchanged("p", "e", "tasks", P1, 4, 5, 30_000), "waited for 5, which left p1 alone");
        feed.join();
        assertFalse(recent.unchanged("p", "e", "tasks", P1, 4, 6, 20), "6 never comes: no answer");
    }

    @Test
    void theTailsStayWithinTheirBytes() {
        long one = RecentCommits.sizeOf(commit(1, "tasks", "p1"));
        RecentCommits recent = new RecentCommits(10 * one);
        for (long s = 1; s <= 30; s++) recent.committed("p", "e", commit(s, "tasks", "p1"));
        assertTrue(recent.bytes() <= 10 * one, recent.bytes() + " bytes kept");
        assertEquals(List.of(30L), seqs(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 29, 30, 100))));
        assertTrue(recent.window("p", "e", new CommitWindowQuery("tasks", P1, 10, 30, 100)).isEmpty(),
                "the oldest went");
        for (long s = 1; s <= 30; s++) recent.committed("q", "e", commit(s, "tasks", "p1"));
        assertTrue(recent.bytes() <= 10 * one, recent.bytes() + " bytes kept over two partitions");
        assertEquals(List.of(30L), seqs(recent.window("q", "e", new CommitWindowQuery("tasks", P1, 29, 30, 100))));
        recent.forgetAll();
        assertEquals(0, recent.bytes());
        RecentCommits none = new RecentCommits(0);
        none.committed("p", "e", commit(1, "tasks", "p1"));
        assertTrue(none.window("p", "e", new CommitWindowQuery("tasks", P1, 0, 1, 100)).isEmpty(), "keeps nothing");
    }
}

package syncular.jakarta.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.CommitFeed;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.PostgresServerStorage;

/**
 * The LISTEN/NOTIFY commit feed on a real PostgreSQL: a notice exists iff the commit committed, every seq is
 * reported once and in order, and after its dedicated connection is killed the feed reconnects, listens again and
 * reports what it missed (SPEC §8.2 fanout follows the commit; issue #8).
 */
@Timeout(60)
class PostgresCommitFeedTest {
    private final CompiledSchema schema = TestSchemas.tasks(1);
    private EmbeddedPostgresSupport.Pool db;
    private PostgresServerStorage storage;
    private PostgresCommitFeed feed;
    private Thread thread;
    private final String appName = "feed-" + UUID.randomUUID().toString().substring(0, 8);
    private final LinkedBlockingQueue<String> seen = new LinkedBlockingQueue<>();

    @BeforeEach
    void start() throws Exception {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1L);
        storage.ensureSchema(schema, List.of());
        feed = new PostgresCommitFeed(() -> {
            Properties p = new Properties();
            p.setProperty("user", "postgres");
            p.setProperty("ApplicationName", appName);
            return DriverManager.getConnection(db.url(), p);
        }, db, 50, 500);
        thread = new Thread(() -> feed.run(new CommitFeed.Listener() {
            @Override
            public void committed(String partition, long commitSeq) { seen.add(partition + ":" + commitSeq); }

            @Override
            public void missed(String partition, long throughSeq) { seen.add(partition + ":missed:" + throughSeq); }

            @Override
            public void rewound(String partition) { seen.add(partition + ":rewound"); }
        }));
        thread.start();
        awaitListening();
    }

    @AfterEach
    void stop() throws Exception {
        feed.close();
        thread.join(5_000);
        db.close();
    }

    private void awaitListening() throws InterruptedException {
        for (int i = 0; i < 200 && !feed.listening(); i++) Thread.sleep(25);
        assertTrue(feed.listening(), "the feed did not start listening");
    }

    private long push(String partition, String id) {
        StoredRow row = TestSchemas.taskRow(schema, id, "p1", 1);
        return storage.inTransaction(partition, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row, 0);
            return tx.appendCommit(TestSchemas.upsertCommit("c-" + id, row), StoredPushResult.applied(0, List.of()));
        });
    }

    private List<String> take(int n) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String s = seen.poll(10, TimeUnit.SECONDS);
            if (s == null) throw new AssertionError("only " + out + " reported");
            out.add(s);
        }
        return out;
    }

    @Test
    void everyCommitIsReportedOnceInOrderAndReadsBackWhole() throws Exception {
        String p = EmbeddedPostgresSupport.partition("feed");
        long s1 = push(p, "r1");
        long s2 = push(p, "r2");
        long s3 = push(p, "r3");
        assertEquals(List.of(p + ":" + s1, p + ":" + s2, p + ":" + s3), take(3));
        assertNull(seen.poll(200, TimeUnit.MILLISECONDS), "no duplicates");
        assertNull(feed.readCommit(p, s2).orElseThrow().logEpoch(), "no registry entry yet");
        String epoch = storage.touchPartition(p, 0, "epoch-1").logEpoch();
        CommitFeed.CommitRead read = feed.readCommit(p, s2).orElseThrow();
        StoredCommit c = read.commit();
        assertEquals(s2, c.commitSeq());
        assertEquals(epoch, read.logEpoch(), "read under the log epoch");
        assertEquals("actor-1", c.actorId());
        assertEquals("r2", c.changes().get(0).rowId());
        assertEquals("p1", c.changes().get(0).scopes().get("project_id"));
        assertTrue(feed.readCommit(p, s3 + 1).isEmpty());
    }

    @Test
    void aRotatedLogEpochRewindsTheFeedSoCommitsOfTheRestoredLogAreReported() throws Exception {
        String p = EmbeddedPostgresSupport.partition("rewind");
        storage.touchPartition(p, 1L, "epoch-before");
        long s1 = push(p, "r1");
        push(p, "r2");
        push(p, "r3");
        assertEquals(3, take(3).size());
        // what a restore of a backup taken after r1 leaves: the log ends at s1 again
        try (Connection c = DriverManager.getConnection(db.url(), "postgres", "");
             PreparedStatement head = c.prepareStatement("UPDATE sync_partitions SET max_commit_seq = ?"
                     + " WHERE partition = ?")) {
            for (String table : List.of("sync_commits", "sync_changes", "sync_change_scopes")) {
                try (PreparedStatement later = c.prepareStatement("DELETE FROM " + table + " WHERE partition = ?"
                        + " AND commit_seq > ?")) {
                    later.setString(1, p);
                    later.setLong(2, s1);
                    later.executeUpdate();
                }
            }
            head.setLong(1, s1);
            head.setString(2, p);
            head.executeUpdate();
        }
        storage.rotatePartitionLogEpoch(p, "epoch-after", 2L);
        assertEquals(List.of(p + ":rewound"), take(1), "every node's feed hears of the rotation");
        long next = push(p, "r4");
        assertEquals(s1 + 1, next, "the restored log goes on from its own head");
        assertEquals(List.of(p + ":" + next), take(1), "a seq the old log had already passed is reported again");
    }

    /** A pool's connection handle that, like WildFly's for a module driver, does not unwrap to our PGConnection. */
    public interface ForeignPoolConnection extends java.sql.Connection {
        java.sql.Connection getUnderlyingConnection();
    }

    @Test
    void aPoolConnectionThatDoesNotUnwrapToOurDriverIsReadThroughItsPhysicalConnection() throws Exception {
        java.sql.Connection physical = DriverManager.getConnection(db.url(), "postgres", "");
        java.sql.Connection handle = (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ForeignPoolConnection.class}, (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "getUnderlyingConnection": return physical;
                        case "isWrapperFor": return false;
                        case "unwrap": throw new java.sql.SQLException("not a wrapper for " + args[0]);
                        default:
                            try {
                                return m.invoke(physical, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                    }
                });
        PostgresCommitFeed pooled = new PostgresCommitFeed(() -> handle, db, 50, 500);
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> pooled.run(new CommitFeed.Listener() {
            @Override
            public void committed(String partition, long commitSeq) { got.add(partition + ":" + commitSeq); }

            @Override
            public void missed(String partition, long throughSeq) { got.add(partition + ":missed:" + throughSeq); }

            @Override
            public void rewound(String partition) { got.add(partition + ":rewound"); }
        }));
        t.start();
        try {
            for (int i = 0; i < 200 && !pooled.listening(); i++) Thread.sleep(25);
            assertTrue(pooled.listening(), "listening through the physical connection");
            String p = EmbeddedPostgresSupport.partition("foreign");
            long seq = push(p, "f1");
            assertEquals(p + ":" + seq, got.poll(10, TimeUnit.SECONDS));
        } finally {
            pooled.close();
            t.join(5_000);
        }
    }

    @Test
    void aRolledBackAppendIsNeverReported() throws Exception {
        String p = EmbeddedPostgresSupport.partition("rollback");
        assertThrows(IllegalStateException.class, () -> storage.inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            StoredRow row = TestSchemas.taskRow(schema, "gone", "p1", 1);
            tx.upsertRow("tasks", row, 0);
            tx.appendCommit(TestSchemas.upsertCommit("c-gone", row), StoredPushResult.applied(0, List.of()));
            throw new IllegalStateException("roll back");
        }));
        long kept = push(p, "kept");
        assertEquals(List.of(p + ":" + kept), take(1));
        assertEquals("kept", feed.readCommit(p, kept).orElseThrow().commit().changes().get(0).rowId());
    }

    @Test
    void afterItsConnectionIsKilledItListensAgainAndReportsWhatItMissed() throws Exception {
        String p = EmbeddedPostgresSupport.partition("kill");
        long before = push(p, "k0");
        assertEquals(List.of(p + ":" + before), take(1));
        try (Connection c = db.rawConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, appName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(1, rs.getInt(1));
            }
        }
        // commits while the listener is (probably) away: no notice reaches it, the catch-up must report them
        long m1 = push(p, "k1");
        long m2 = push(p, "k2");
        assertEquals(List.of(p + ":" + m1, p + ":" + m2), take(2));
        awaitListening();
        long after = push(p, "k3");
        assertEquals(List.of(p + ":" + after), take(1));
    }

    @Test
    void forgottenPositionsStartFreshAfterTheLogWasWiped() throws Exception {
        String p = EmbeddedPostgresSupport.partition("wipe");
        push(p, "w1");
        push(p, "w2");
        take(2);
        try (Connection c = db.rawConnection(); var s = c.createStatement()) {
            s.execute("DELETE FROM sync_changes; DELETE FROM sync_change_scopes; DELETE FROM sync_commits;"
                    + " DELETE FROM sync_push_results; DELETE FROM tasks; DELETE FROM sync_partitions");
        }
        feed.forgetPositions();
        Thread.sleep(200);   // one poll applies it
        long again = push(p, "w3");
        assertEquals(1, again);
        assertEquals(List.of(p + ":1"), take(1));
    }
}

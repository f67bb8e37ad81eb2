package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * Realtime across nodes (issue 8): two Payara Micro processes with the same WAR on the same PostgreSQL, nothing
 * shared between them but the database. A commit pushed over HTTP to node A reaches a socket on node B as a delta
 * (PostgreSQL LISTEN/NOTIFY, {@code PostgresCommitFeed}); and when node B's listening connection is killed, every
 * commit node A takes while B's listener is down reaches B's socket once, in commit order, after B listens again
 * (catch-up from the last seen seq), then live deltas resume.
 */
@Timeout(600)
class CrossNodeRealtimeMicroIT extends DatabaseIsolation {
    static final String PARTITION = "it-micro-realtime";
    static final String FEED_APP = "syncular-commit-feed";
    static MicroNode a;
    static MicroNode b;

    static Map<String, String> config() {
        return Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*");
    }

    @BeforeAll
    static void twoNodesOnOneDatabase() {
        // started together: two nodes coming up at once on an empty database also race the schema install
        a = MicroNode.launch("rt-a", It.withConfig(It.war("rt-a"), config()), Map.of());
        b = MicroNode.launch("rt-b", It.withConfig(It.war("rt-b"), config()), Map.of());
        a.awaitReady();
        b.awaitReady();
    }

    @AfterAll
    static void stopNodes() throws Exception {
        try {
            setAllowConnections(true);   // in case a test failed inside its window
        } finally {
            if (a != null) a.close();
            if (b != null) b.close();
        }
    }

    private static long num(Object o) { return ((Number) o).longValue(); }

    private static Map<?, ?> data(Map<?, ?> event) { return (Map<?, ?>) event.get("data"); }

    /** A client that pulled its list once on {@code node}: its record registers the subscription (§8.1). */
    private static SyncTestClient pulledOn(MicroNode node, String clientId, String list) throws Exception {
        SyncTestClient c = new SyncTestClient(node.base(), clientId, list);
        c.round(List.of());
        return c;
    }

    private static RealtimeTestSocket connected(MicroNode node, SyncTestClient client) throws Exception {
        RealtimeTestSocket s = RealtimeTestSocket.open(node.base(), "clientId=" + client.clientId);
        Map<?, ?> hello = s.nextEvent(30);
        assertEquals("hello", hello.get("event"));
        assertEquals(false, data(hello).get("requiresSync"), () -> "hello: " + hello);
        return s;
    }

    /** The one change of a delta's one commit, checked to be on {@code rowId} with {@code title}. */
    private static CommitFrame assertDelta(ResponseMessage delta, String subscription, String rowId, String title) {
        assertEquals(subscription, assertInstanceOf(SubStart.class, delta.frames().get(1)).id());
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals(1, commit.changes().size());
        CommitFrame.Change change = commit.changes().get(0);
        assertEquals(rowId, change.rowId());
        assertEquals(title, RowCodec.decode(SyncTestClient.TODOS, change.row())[2], "the row the commit wrote");
        assertEquals(commit.commitSeq(), assertInstanceOf(SubEnd.class, delta.frames().get(3)).nextCursor());
        return commit;
    }

    @Test
    void aCommitPushedToNodeAReachesASocketOnNodeB() throws Exception {
        SyncTestClient reader = pulledOn(b, "x-reader", "L-cross");
        SyncTestClient writer = new SyncTestClient(a.base(), "x-writer", "L-cross");
        try (RealtimeTestSocket socket = connected(b, reader)) {
            writer.round(List.of(writer.upsert("x1", "pushed to node A", null)));
            CommitFrame c = assertDelta(socket.nextDelta(30), "todos-L-cross", "x1", "pushed to node A");
            try (Connection db = It.jdbc()) {
                assertEquals(c.commitSeq(), one(db, "SELECT max_commit_seq FROM sync_partitions WHERE partition = '"
                        + PARTITION + "'"), "the delta carries the commit node A stored");
            }
            socket.expectSilence(300);
        }
    }

    @Test
    void nodeBCatchesUpEveryCommitMissedWhileItsListenerWasKilledInOrderOnceThenDeltasResume() throws Exception {
        SyncTestClient reader = pulledOn(b, "f-reader", "L-feed");
        SyncTestClient writer = pulledOn(a, "f-writer", "L-feed");
        SyncTestClient onA = pulledOn(a, "f-watcher-a", "L-feed");
        int pgPort = Integer.getInteger("syncular.it.pg.port");
        try (RealtimeTestSocket socket = connected(b, reader); RealtimeTestSocket socketOnA = connected(a, onA);
             Connection db = It.jdbc()) {
            writer.round(List.of(writer.upsert("f0", "live before", null)));
            long seq0 = assertDelta(socket.nextDelta(30), "todos-L-feed", "f0", "live before").commitSeq();
            socketOnA.nextDelta(30);

            // both nodes listen under the same application_name: B's backend is the one on B's client port
            long feedB = feedBackend(db, b, pgPort);
            long feedA = feedBackend(db, a, pgPort);
            assertNotEquals(feedA, feedB);
            assertEquals(2, one(db, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + FEED_APP
                    + "'"), "one feed connection per node");

            List<String> missed = List.of("m1", "m2", "m3", "m4", "m5");
            // keep B's listener down for a known window: no new connection to this database (A pushes on its
            // pooled ones; B's feed retries with its backoff until connections are allowed again)
            setAllowConnections(false);
            try {
                assertEquals(1, one(db, "SELECT pg_terminate_backend(" + feedB + ")::int"), "terminated B's feed");
                awaitZero(db, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + feedB, "B's feed backend ended");
                for (String id : missed) writer.round(List.of(writer.upsert(id, "while B was deaf: " + id, null)));
                assertEquals(0, feedBackends(db, b, pgPort).size(), "B's listener stayed down through the commits");
                assertEquals(1, one(db, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + feedA),
                        "A's listener was not touched");
                for (Object m : socket.messages) {
                    assertFalse(m instanceof byte[], "B cannot have heard of a commit while its listener was down");
                }
            } finally {
                setAllowConnections(true);
            }

            // every missed commit, in commit order, each once (seqs dense after f0)
            for (int i = 0; i < missed.size(); i++) {
                CommitFrame c = assertDelta(socket.nextDelta(60), "todos-L-feed", missed.get(i),
                        "while B was deaf: " + missed.get(i));
                assertEquals(seq0 + 1 + i, c.commitSeq(), "commit order");
            }
            socket.expectSilence(1000);   // no duplicate: a late NOTIFY of a caught-up seq is dropped
            assertEquals(1, feedBackends(db, b, pgPort).size(), "B listens again");

            writer.round(List.of(writer.upsert("f6", "live again", null)));
            assertEquals(seq0 + missed.size() + 1,
                    assertDelta(socket.nextDelta(30), "todos-L-feed", "f6", "live again").commitSeq());
            assertTrue(b.logText().contains("commit feed connection lost"), "B logged the lost feed connection");
        }
    }

    /** The pid of {@code node}'s commit-feed backend, waiting until it exists. */
    private static long feedBackend(Connection db, MicroNode node, int pgPort) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<Long> pids = feedBackends(db, node, pgPort);
        while (pids.size() != 1 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            pids = feedBackends(db, node, pgPort);
        }
        assertEquals(1, pids.size(), () -> node.name + " has one feed connection");
        return pids.get(0);
    }

    private static List<Long> feedBackends(Connection db, MicroNode node, int pgPort) throws SQLException {
        Set<Integer> ports = node.localPortsTo(pgPort);
        List<Long> pids = new ArrayList<>();
        try (PreparedStatement ps = db.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ? "
                + "AND client_port = ANY (?)")) {
            ps.setString(1, FEED_APP);
            ps.setArray(2, db.createArrayOf("int4", ports.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) pids.add(rs.getLong(1));
            }
        }
        return pids;
    }

    /**
     * {@code ALTER DATABASE postgres ALLOW_CONNECTIONS}, from template1 so it also works when the flag is off. Existing
     * sessions stay; new ones are refused ("database is not currently accepting connections").
     */
    static void setAllowConnections(boolean allow) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:"
                + Integer.getInteger("syncular.it.pg.port") + "/template1", "postgres", "postgres");
             Statement s = c.createStatement()) {
            s.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS " + allow);
        }
    }

    private static void awaitZero(Connection db, String sql, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (one(db, sql) != 0) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within 30 s: " + what);
            Thread.sleep(50);
        }
    }

    static long one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getLong(1) : -1;
        }
    }
}

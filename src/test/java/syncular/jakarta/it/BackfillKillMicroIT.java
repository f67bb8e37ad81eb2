package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubStart;

/**
 * Issue 7, "kill the server mid-backfill": {@code kill -9} of a Payara Micro process that runs a backfill, then a
 * fresh node. A v1 node writes a few thousand rows and stops; a v2 worker (small batches, short interval) starts
 * the backfill of {@code todo_titles}. Once batches have committed, the test holds the partition row lock, waits until
 * that node's next batch (advisory lock taken, claim and source rows read) is blocked on it, and SIGKILLs the
 * process: the batch's transaction dies with it, nothing of it commits. A second worker is killed at a random point
 * without any lock. A third completes the backfill: the projection is exactly the source, every batch committed once
 * (ceil(rows / batch) backfill commits, no duplicate clientCommitId), the watermark never decreased, and the new
 * node serves.
 *
 * <p>Unlike {@link CrashRecoveryBackfillIT} (a cancelled statement in a shared server), here the whole process and
 * its pool die: the dead node's backends go away when PostgreSQL sees their sockets closed — at once for an idle one,
 * only when the lock is granted for one blocked on a lock (it never reads its socket while it waits).
 */
@Timeout(900)
class BackfillKillMicroIT extends DatabaseIsolation {
    static final String PARTITION = "it-micro-kill";
    static final String NAME = "todo_titles_kill";
    static final String CLIENT = "[\"backfill\",\"" + NAME + "\"]";
    static final int ROWS = 3000;
    /**
     * 34 batches, the last one short (ceil, not a multiple). Payara delivers an EJB timer at most once a second
     * whatever {@code syncular.backfill.interval-ms} asks, so the batch count is most of this test's run time.
     */
    static final int BATCH = 90;
    static final List<MicroNode> NODES = new ArrayList<>();

    @AfterAll
    static void stopNodes() {
        for (MicroNode n : NODES) n.close();
    }

    static Map<String, String> config(Map<String, String> extra) {
        Map<String, String> m = new TreeMap<>(Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user", "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*"));
        m.putAll(extra);
        return m;
    }

    static WebArchive v1() { return It.withConfig(It.war("kill-v1"), config(Map.of())); }

    static WebArchive worker() {
        return It.withConfig(It.war("kill-v2"), config(Map.of(
                "syncular.schema", "syncular/it/upgrade-v2.json",
                "syncular.backfill.definitions", NAME + "@2:todos->todo_titles",
                "syncular.backfill.batch-size", String.valueOf(BATCH),
                "syncular.backfill.interval-ms", "100",
                // a batch every 100 ms, so the pass is still running when the test interferes
                "syncular.backfill.pause-ms", "100")))
                .addAsResource(new StringAsset(RollingUpgradeMigrationIT.V2_SCHEMA), "syncular/it/upgrade-v2.json");
    }

    static MicroNode start(String name, WebArchive war) {
        MicroNode n = MicroNode.launch(name, war, Map.of());
        NODES.add(n);
        n.awaitReady();
        return n;
    }

    /** The committed backfill state: pass row and checkpoint row. */
    record State(long batches, long passRows, String position, long epoch, long watermark, long commits,
                 long projected) {
        static State read(Connection c) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT p.batches, p.pass_rows, p.source_index || '/' || COALESCE(p.after_row_id, ''),
                           k.owner_epoch, k.watermark,
                           (SELECT count(*) FROM sync_commits WHERE partition = k.partition AND client_id = ?),
                           (SELECT count(*) FROM todo_titles WHERE "_sync_partition" = k.partition)
                      FROM sync_backfill_checkpoints k
                      JOIN sync_backfill_passes p ON p.partition = k.partition AND p.name = k.name
                     WHERE k.partition = ? AND k.name = ?""")) {
                ps.setString(1, CLIENT);
                ps.setString(2, PARTITION);
                ps.setString(3, NAME);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) return new State(0, 0, "", 0, 0, 0, 0);
                    return new State(rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getLong(4), rs.getLong(5),
                            rs.getLong(6), rs.getLong(7));
                }
            }
        }

        /** Batch, position, projection and log committed together or not at all. */
        void assertConsistent(String when) {
            assertEquals(batches, commits, when + ": one backfill commit per committed batch");
            assertEquals(batches * BATCH, passRows, when + ": pass rows");
            assertEquals(passRows, projected, when + ": projection rows");
        }
    }

    @Test
    void killedMidBatchAndAtRandomTheBackfillStillCompletesExactly() throws Exception {
        try (MicroNode v1 = MicroNode.start("kill-v1", v1(), Map.of())) {
            SyncTestClient writer = new SyncTestClient(v1.base(), "writer", "list-kill");
            for (int r = 0; r < ROWS / 500; r++) {
                List<PushCommit> pushes = new ArrayList<>();
                for (int c = 0; c < 5; c++) {
                    List<PushCommit.Operation> ops = new ArrayList<>();
                    for (int i = 0; i < 100; i++) {
                        int n = r * 500 + c * 100 + i;
                        String id = String.format("todo-%05d", n);
                        ops.add(PushCommit.Operation.upsert("todos", id, null,
                                SyncTestClient.todo(id, "list-kill", "Title " + n, false, n)));
                    }
                    pushes.add(new PushCommit("seed-" + r + "-" + c, ops));
                }
                ResponseMessage resp = writer.send(new RequestMessage(1, concat(new ReqHeader(writer.clientId, 1),
                        pushes)));
                long applied = resp.frames().stream().filter(f -> f instanceof PushResult p
                        && p.status() == PushResult.Status.APPLIED).count();
                assertEquals(5, applied, "seed request " + resp);
            }
        }
        int pgPort = Integer.getInteger("syncular.it.pg.port");
        try (Connection watch = It.jdbc(); Connection holder = It.jdbc()) {
            assertEquals(ROWS, one(watch, "SELECT count(*) FROM todos WHERE \"_sync_partition\" = ?", PARTITION));
            Sampler sampler = new Sampler();
            sampler.start();
            try {
                // ---- kill 1: while this node's batch transaction is open, blocked on the partition lock we hold
                MicroNode w1 = start("kill-v2", worker());
                awaitBatches(watch, 3);
                holder.setAutoCommit(false);
                one(holder, "SELECT 1 FROM sync_partitions WHERE partition = ? FOR UPDATE", PARTITION);
                long victim = awaitBlockedBatch(watch);
                Set<Integer> w1Ports = w1.localPortsTo(pgPort);
                assertTrue(w1Ports.contains((int) one(watch, "SELECT client_port FROM pg_stat_activity WHERE pid = "
                        + victim)), "the blocked batch is the worker's own backend");
                State before1 = State.read(watch);
                before1.assertConsistent("before kill 1");
                w1.kill();
                boolean lingered = one(watch, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + victim) == 1;
                System.out.printf("kill 1 at %s; the blocked backend %s after the kill%n", before1,
                        lingered ? "lingered" : "was already gone");
                holder.rollback();   // the lingering backend gets the lock, finds its client gone, and aborts
                awaitGone(watch, w1Ports, "the killed worker's backends");
                State after1 = State.read(watch);
                assertEquals(before1, after1, "nothing of the killed batch committed");
                assertEquals(0, one(watch, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
                        "the batch's advisory lock died with its transaction");

                // ---- kill 2: a second worker, killed at a random point with no lock held
                MicroNode w2 = start("kill-v2", worker());
                long target = after1.batches() + 2 + ThreadLocalRandom.current().nextInt(10);
                awaitBatches(watch, target);
                Thread.sleep(ThreadLocalRandom.current().nextInt(150));   // anywhere within the next batch
                Set<Integer> w2Ports = w2.localPortsTo(pgPort);
                w2.kill();
                awaitGone(watch, w2Ports, "the second killed worker's backends");
                State after2 = State.read(watch);
                System.out.printf("kill 2 at %s%n", after2);
                after2.assertConsistent("after kill 2");
                assertTrue(after2.batches() >= target && after2.batches() < (ROWS + BATCH - 1) / BATCH,
                        "killed mid-pass");

                // ---- a fresh node completes the backfill
                MicroNode w3 = start("kill-v2", worker());
                long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                while (!"activated".equals(state(watch)) && System.nanoTime() < deadline) Thread.sleep(100);
                assertEquals("activated", state(watch), () -> "not activated; worker log:\n" + w3.tail(40));

                long expected = (ROWS + BATCH - 1) / BATCH;
                assertEquals(0, one(watch, "SELECT count(*) FROM todos t FULL JOIN todo_titles p "
                        + "ON p.\"_sync_partition\" = t.\"_sync_partition\" AND p.id = t.id "
                        + "WHERE COALESCE(t.\"_sync_partition\", p.\"_sync_partition\") = ? "
                        + "AND (t.id IS NULL OR p.id IS NULL OR t.title <> p.title OR t.list_id <> p.list_id)",
                        PARTITION), "the projection is exactly the source");
                assertEquals(ROWS, one(watch, "SELECT count(*) FROM todo_titles WHERE \"_sync_partition\" = ?",
                        PARTITION));
                assertEquals(1, one(watch, "SELECT max(\"_sync_server_version\") FROM todo_titles "
                        + "WHERE \"_sync_partition\" = ?", PARTITION), "no projection row written twice");
                assertEquals(expected, one(watch, "SELECT count(*) FROM sync_commits WHERE partition = ? "
                        + "AND client_id = ?", PARTITION, CLIENT), "ceil(rows / batch) backfill commits");
                assertEquals(expected, one(watch, "SELECT count(DISTINCT client_commit_id) FROM sync_commits "
                        + "WHERE partition = ? AND client_id = ?", PARTITION, CLIENT), "no batch applied twice");
                String redone = (before1.epoch() + 1) + ":1:" + before1.position();
                assertEquals(1, one(watch, "SELECT count(*) FROM sync_commits WHERE partition = ? AND client_id = ? "
                        + "AND client_commit_id = ?", PARTITION, CLIENT, redone),
                        "the killed batch's claim died with it: its redo took the same epoch and position " + redone);

                sampler.stop();
                assertTrue(sampler.samples.size() > 10, "the watermark was sampled during the run");
                assertEquals(List.of(), sampler.decreases, "the watermark never decreases");
                assertTrue(one(watch, "SELECT watermark FROM sync_backfill_checkpoints WHERE partition = ? "
                        + "AND name = ?", PARTITION, NAME) >= before1.watermark());

                // serving resumes on the new node
                SyncTestClient reader = new SyncTestClient(w3.base(), "reader-after", "list-kill");
                HttpResponse<byte[]> pulled = reader.post(RequestEncoder.encode(new RequestMessage(1, List.of(
                        new ReqHeader(reader.clientId, 2),   // a v2 client (a v1 header gets the schema floor)
                        new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                        reader.subscription()))), false);
                assertEquals(200, pulled.statusCode(), () -> new String(pulled.body()));
                ResponseMessage answer = ResponseDecoder.decode(pulled.body());
                assertTrue(answer.frames().stream().anyMatch(f -> f instanceof SubStart),
                        () -> "the pull answered its subscription: " + answer.frames().stream()
                                .map(f -> f.getClass().getSimpleName() + (f instanceof ErrorFrame e ? " " + e.code()
                                        + " " + e : "")).toList());
            } finally {
                sampler.stop();
            }
        }
    }

    private static List<RequestFrame> concat(RequestFrame head, List<PushCommit> rest) {
        List<RequestFrame> all = new ArrayList<>();
        all.add(head);
        all.addAll(rest);
        return all;
    }

    /** Samples the watermark on its own connection every 20 ms and records every decrease. */
    static final class Sampler {
        final List<Long> samples = new CopyOnWriteArrayList<>();
        final List<String> decreases = new CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private Thread thread;

        void start() {
            thread = new Thread(() -> {
                try (Connection c = It.jdbc()) {
                    long last = Long.MIN_VALUE;
                    while (running.get()) {
                        long w = one(c, "SELECT watermark FROM sync_backfill_checkpoints WHERE partition = ? "
                                + "AND name = ?", PARTITION, NAME);
                        if (w >= 0) {
                            samples.add(w);
                            if (w < last) decreases.add(last + " -> " + w);
                            last = w;
                        }
                        Thread.sleep(20);
                    }
                } catch (Exception e) {
                    if (running.get()) decreases.add("sampler failed: " + e);
                }
            }, "watermark-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (thread != null) thread.join(5000);
        }
    }

    private static void awaitBatches(Connection c, long n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (State.read(c).batches() < n) {
            if (System.nanoTime() > deadline) throw new AssertionError(n + " backfill batches never committed: "
                    + State.read(c));
            Thread.sleep(20);
        }
    }

    /** The backend of a batch that holds its advisory lock and waits on a heavyweight lock (ours). */
    private static long awaitBlockedBatch(Connection c) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            long pid = one(c, "SELECT a.pid FROM pg_stat_activity a WHERE a.application_name = 'syncular' "
                    + "AND a.wait_event_type = 'Lock' AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid "
                    + "AND l.locktype = 'advisory' AND l.granted) LIMIT 1");
            if (pid > 0) return pid;
            Thread.sleep(20);
        }
        throw new AssertionError("no backfill batch blocked on the partition lock within 60 s");
    }

    /** Waits until no backend is connected from {@code ports} (the killed node's sockets). */
    private static void awaitGone(Connection c, Set<Integer> ports, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            long n;
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM pg_stat_activity WHERE client_port = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("int4", ports.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    n = rs.getLong(1);
                }
            }
            if (n == 0) return;
            if (System.nanoTime() > deadline) throw new AssertionError(what + ": " + n + " still connected after 60 s");
            Thread.sleep(50);
        }
    }

    static String state(Connection c) throws SQLException { return state(c, PARTITION, NAME); }

    /** The checkpoint's state, or "absent". */
    static String state(Connection c, String partition, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT state FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?")) {
            ps.setString(1, partition);
            ps.setString(2, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : "absent";
            }
        }
    }

    static long one(Connection c, String sql, String... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) ps.setString(i + 1, params[i]);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }
}

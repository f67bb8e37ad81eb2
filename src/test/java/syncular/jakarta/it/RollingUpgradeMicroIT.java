package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.SubStart;

/**
 * A rolling upgrade N=1 → N+1=2 under continuous load on two Payara Micro processes (issue 21, RFC 0007): both
 * nodes serve v1 to clients pushing and pulling through a round-robin "load balancer"; node A is replaced by a v2
 * node declaring the {@code todo_titles} backfill, which is killed ({@code kill -9}) mid-backfill and replaced by
 * another; once the projection is active, node B is replaced by a v2 node too. Throughout: no 200 response is served
 * at a schema version other than the one its request asked for (a mismatch is the §1.6 floor, which carries nothing
 * but its header); once a v2 commit exists no v1 binary commits; every refusal is 503 {@code sync.schema_not_ready};
 * the projection is exactly the source as of the activation watermark (later source rows are the v2 app's to
 * project); and every client converges with the server.
 */
@Timeout(900)
class RollingUpgradeMicroIT extends DatabaseIsolation {
    static final String PARTITION = "it-micro-rolling";
    static final String NAME = "todo_titles_rolling";
    /**
     * Source rows before the upgrade; {@code -Dsyncular.it.rolling.seed=1000000} makes this run the benchmark, with
     * {@code -Djunit.jupiter.execution.timeout.mode=disabled}: its seeding and backfill outlast the class's 900 s
     * (its own deadlines still bound every wait).
     */
    static final int SEED = Integer.getInteger("syncular.it.rolling.seed", 1500);
    /** Whether the first v2 node is killed mid-backfill (the benchmark runs without). */
    static final boolean KILL = Boolean.parseBoolean(System.getProperty("syncular.it.rolling.kill", "true"));
    /** The v2 nodes' {@code syncular.backfill.batch-size}: small by default, so a small seed takes several batches. */
    static final String BATCH = System.getProperty("syncular.it.rolling.batch", "100");
    /**
     * {@code round-robin} (default): the balancer sends to every node in its pool, so the v1 node's refusals are
     * exercised; {@code readiness}: it follows each node's {@code health/ready} as a production balancer does (the
     * benchmark: a refusing node then costs no CPU beyond its refusals until the next poll).
     */
    static final boolean FOLLOW_READINESS = "readiness".equals(System.getProperty("syncular.it.rolling.balancer"));
    /** Seconds of warm-up and then of measured load before the upgrade starts (the benchmark); 0: just warm. */
    static final int BEFORE_S = Integer.getInteger("syncular.it.rolling.before-s", 0);
    /** The nodes of the pool whose {@code health/ready} answered 200 at the last poll (readiness balancer). */
    static final java.util.Set<MicroNode> READY = ConcurrentHashMap.newKeySet();
    static final List<MicroNode> NODES = new CopyOnWriteArrayList<>();
    /** The load balancer's pool: the nodes traffic goes to now. */
    static final List<MicroNode> POOL = new CopyOnWriteArrayList<>();
    /**
     * Nodes drained from the pool and being stopped: a request already in flight to one may meet the container's
     * shutdown (Payara answers 500 once Jersey is destroyed), which is the balancer's drain race, not a sync answer.
     */
    static final java.util.Set<MicroNode> STOPPING = ConcurrentHashMap.newKeySet();

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

    static WebArchive v1(String name) { return It.withConfig(It.war(name), config(Map.of())); }

    static WebArchive v2(String name) {
        return It.withConfig(It.war(name), config(Map.of(
                "syncular.schema", "syncular/it/upgrade-v2.json",
                "syncular.backfill.definitions", NAME + "@2:todos->todo_titles",
                "syncular.backfill.batch-size", BATCH,
                "syncular.backfill.interval-ms", "100")))
                .addAsResource(new StringAsset(RollingUpgradeMigrationIT.V2_SCHEMA), "syncular/it/upgrade-v2.json");
    }

    static MicroNode start(String name, WebArchive war) {
        MicroNode n = MicroNode.start(name, war, Map.of());
        NODES.add(n);
        return n;
    }

    /** What the load saw. */
    static final class Tally {
        final AtomicInteger served = new AtomicInteger();
        final AtomicInteger floors = new AtomicInteger();
        final AtomicInteger notReady = new AtomicInteger();
        final AtomicInteger dropped = new AtomicInteger();   // the connection died with a stopped or killed node
        final List<String> violations = new CopyOnWriteArrayList<>();
        final Map<Integer, AtomicInteger> servedAt = new ConcurrentHashMap<>();
        /** The phase rounds are in now, and each served round's latency by phase. */
        volatile String phase = "1 before";
        final Map<String, List<Long>> latencies = new ConcurrentHashMap<>();

        String percentiles() {
            StringBuilder out = new StringBuilder();
            new TreeMap<>(latencies).forEach((phase, all) -> {
                List<Long> sorted = new ArrayList<>(all);
                java.util.Collections.sort(sorted);
                if (sorted.isEmpty()) return;
                out.append(String.format(java.util.Locale.ROOT, "%n| %s | %d | %.1f | %.1f |", phase, sorted.size(),
                        sorted.get(sorted.size() / 2) / 1e6, sorted.get((int) (sorted.size() * 0.95)) / 1e6));
            });
            return out.toString();
        }
    }

    /**
     * A client of its own list, knowing one schema version: each round pushes one row and pulls. A floor answer
     * moves it to the required version and re-bootstraps it (§1.6, §7.4), as the upstream clients do.
     */
    static final class LoadClient implements Runnable {
        final String clientId;
        final String list;
        final SyncTestClient codec;
        final AtomicBoolean stop;
        final Tally tally;
        final AtomicLong rows = new AtomicLong();
        volatile int schemaVersion = 1;

        LoadClient(int n, AtomicBoolean stop, Tally tally) {
            this.clientId = "roller-" + n;
            this.list = "roll-" + n;
            this.codec = new SyncTestClient(URI.create("http://localhost/"), clientId, list);
            this.stop = stop;
            this.tally = tally;
        }

        @Override
        public void run() {
            int turn = 0;
            while (!stop.get()) {
                List<MicroNode> pool = POOL.stream().filter(n -> !FOLLOW_READINESS || READY.contains(n)).toList();
                if (pool.isEmpty()) {
                    LockSupport.parkNanos(5_000_000);
                    continue;
                }
                MicroNode node = pool.get(turn++ % pool.size());
                try {
                    round(node);
                } catch (IOException e) {
                    tally.dropped.incrementAndGet();
                } catch (Exception e) {
                    tally.violations.add(clientId + " on " + node + ": " + e);
                }
            }
        }

        /** One round on {@code node}; true when it was served (not refused, not a floor). */
        boolean round(MicroNode node) throws Exception {
            String id = list + "-" + rows.get();
            int asked = schemaVersion;
            List<RequestFrame> frames = new ArrayList<>();
            frames.add(new ReqHeader(clientId, asked));
            frames.add(new PushCommit(clientId + "-" + rows.get(), List.of(PushCommit.Operation.upsert("todos", id,
                    null, SyncTestClient.todo(id, list, "row " + rows.get(), false, rows.get())))));
            frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
            frames.add(codec.subscription());
            codec.reconnect(node.base());
            long started = System.nanoTime();
            HttpResponse<byte[]> r = codec.post(RequestEncoder.encode(new RequestMessage(1, frames)), false);
            if (r.statusCode() == 503 && new String(r.body()).contains("\"sync.schema_not_ready\"")) {
                tally.notReady.incrementAndGet();
                return false;
            }
            if (r.statusCode() != 200 && STOPPING.contains(node)) {
                tally.dropped.incrementAndGet();
                return false;
            }
            if (r.statusCode() != 200) {
                tally.violations.add(clientId + " on " + node + ": HTTP " + r.statusCode() + " " + new String(r.body()));
                return false;
            }
            ResponseMessage m = ResponseDecoder.decode(r.body());
            RespHeader header = (RespHeader) m.frames().get(0);
            if (header.requiredSchemaVersion() != null) {
                tally.floors.incrementAndGet();
                if (m.frames().size() != 1) {
                    tally.violations.add(clientId + ": a floor answer carried data " + m.frames());
                }
                if (header.requiredSchemaVersion() > asked) {   // an upgraded server: upgrade and re-bootstrap
                    schemaVersion = header.requiredSchemaVersion();
                    codec.cursor = -1;
                    codec.bootstrapState = null;
                    codec.replica.clear();
                }
                return false;   // an older node answering a newer client: the next one may serve
            }
            if (header.latestSchemaVersion() == null || header.latestSchemaVersion() != asked) {
                tally.violations.add(clientId + ": asked v" + asked + ", served " + header);
            }
            tally.served.incrementAndGet();
            tally.latencies.computeIfAbsent(tally.phase, p -> new CopyOnWriteArrayList<>())
                    .add(System.nanoTime() - started);
            tally.servedAt.computeIfAbsent(asked, v -> new AtomicInteger()).incrementAndGet();
            for (ResponseFrame f : m.frames()) {
                if (f instanceof PushResult p && p.status() != PushResult.Status.APPLIED
                        && p.status() != PushResult.Status.CACHED) {
                    tally.violations.add(clientId + ": push " + p);
                }
                if (f instanceof SubStart s && s.status() != SubStart.Status.ACTIVE) {
                    // a reset (a rebootstrap after the upgrade) restarts from scratch
                    codec.replica.clear();
                }
            }
            boolean pushed = m.frames().stream().anyMatch(f -> f instanceof PushResult p
                    && (p.status() == PushResult.Status.APPLIED || p.status() == PushResult.Status.CACHED));
            codec.apply(m);
            if (pushed) rows.incrementAndGet();
            return true;
        }
    }

    @Test
    void twoNodesUpgradeOneAfterTheOtherUnderLoadAndNothingIsMixedLostOrWrittenByTheOldBinary() throws Exception {
        MicroNode a = start("roll-a", v1("roll-a"));
        MicroNode b = start("roll-b", v1("roll-b"));
        seed(a, SEED);
        POOL.addAll(List.of(a, b));
        Tally tally = new Tally();
        AtomicBoolean stop = new AtomicBoolean();
        List<LoadClient> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LoadClient c = new LoadClient(i, stop, tally);
            clients.add(c);
            Thread t = new Thread(c, c.clientId);
            t.start();
            threads.add(t);
        }
        Thread poller = null;
        if (FOLLOW_READINESS) {
            poller = new Thread(() -> pollReadiness(stop), "readiness-balancer");
            poller.start();
        }
        try (Connection watch = It.jdbc()) {
            awaitServed(tally, 30);
            if (BEFORE_S > 0) {
                tally.phase = "0 warm-up";
                Thread.sleep(BEFORE_S * 1000L);
                tally.phase = "1 before";
                Thread.sleep(BEFORE_S * 1000L);
            }

            // node A: drained, stopped, replaced by a v2 node that declares and runs the backfill
            POOL.remove(a);
            STOPPING.add(a);
            a.stop();
            tally.phase = "2 during the backfill";
            long declared = System.nanoTime();
            MicroNode a2 = start("roll-a2", v2("roll-a2"));
            POOL.add(a2);
            awaitBatches(watch, 1);
            long firstBatch = System.nanoTime();
            MicroNode a3 = a2;
            if (KILL) {
                awaitBatches(watch, 3);
                // killed mid-backfill, replaced by another v2 node
                POOL.remove(a2);
                STOPPING.add(a2);
                a2.kill();
                a3 = start("roll-a3", v2("roll-a3"));
                POOL.add(a3);
            }
            MicroNode worker = a3;
            long deadline = System.nanoTime() + Duration.ofSeconds(Math.max(240, SEED / 500)).toNanos();
            while (!"activated".equals(BackfillKillMicroIT.state(watch, PARTITION, NAME))
                    && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertEquals("activated", BackfillKillMicroIT.state(watch, PARTITION, NAME),
                    () -> "not activated under load; worker log:\n" + worker.tail(40));
            double activationS = (System.nanoTime() - declared) / 1e9;
            double backfillS = (System.nanoTime() - firstBatch) / 1e9;
            long projected = BackfillKillMicroIT.one(watch, "SELECT count(*) FROM todo_titles"
                    + " WHERE \"_sync_partition\" = ?", PARTITION);
            System.out.printf(java.util.Locale.ROOT, "rolling upgrade: %d rows projected; %.1f s from the v2 node's"
                    + " start to activation, %.1f s from its first batch (%.0f rows/s%s)%n", projected, activationS,
                    backfillS, projected / backfillS, KILL ? ", a kill and a restart included" : "");
            tally.phase = "3 after activation";

            // node B: the last v1 node, replaced by v2
            POOL.remove(b);
            STOPPING.add(b);
            b.stop();
            MicroNode b2 = start("roll-b2", v2("roll-b2"));
            POOL.add(b2);
            int before = tally.servedAt.getOrDefault(2, new AtomicInteger()).get();
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (tally.servedAt.getOrDefault(2, new AtomicInteger()).get() < before + 30
                    && System.nanoTime() < until) {
                Thread.sleep(100);
            }
        } finally {
            stop.set(true);
            for (Thread t : threads) t.join(60_000);
            if (poller != null) poller.join(10_000);
        }

        System.out.printf("rolling upgrade under load: %d served (%s by version), %d floors, %d x 503 "
                        + "schema_not_ready, %d dropped by a node being stopped%n| phase | rounds | p50 ms | p95 ms |%s%n",
                tally.served.get(), tally.servedAt, tally.floors.get(), tally.notReady.get(), tally.dropped.get(),
                tally.percentiles());
        assertEquals(List.of(), tally.violations, "every answer served at the asked version, nothing refused otherwise");
        assertTrue(tally.servedAt.getOrDefault(1, new AtomicInteger()).get() > 0
                && tally.servedAt.getOrDefault(2, new AtomicInteger()).get() > 0, "served before and after");
        try (Connection c = It.jdbc()) {
            // the projection is the backfill's up to the activation watermark; later rows are the v2 app's to write
            long watermark = BackfillKillMicroIT.one(c, "SELECT watermark FROM sync_backfill_checkpoints"
                    + " WHERE partition = ? AND name = ?", PARTITION, NAME);
            assertEquals(0, BackfillKillMicroIT.one(c, "SELECT count(*) FROM"
                    + " (SELECT DISTINCT row_id FROM sync_changes WHERE partition = ? AND tbl = 'todos'"
                    + "   AND commit_seq <= " + watermark + ") s"
                    + " FULL JOIN (SELECT * FROM todo_titles WHERE \"_sync_partition\" = ?) p ON p.id = s.row_id"
                    + " LEFT JOIN (SELECT * FROM todos WHERE \"_sync_partition\" = ?) t"
                    + "   ON t.id = COALESCE(s.row_id, p.id)"
                    + " WHERE s.row_id IS NULL OR p.id IS NULL OR t.title <> p.title OR t.list_id <> p.list_id",
                    PARTITION, PARTITION, PARTITION), "the projection is exactly the source at activation");
            assertTrue(BackfillKillMicroIT.one(c, "SELECT count(*) FROM todo_titles WHERE \"_sync_partition\" = ?",
                    PARTITION) > SEED, "seed and load rows projected");
            long firstV2 = BackfillKillMicroIT.one(c, "SELECT min(commit_seq) FROM sync_commits WHERE partition = ?"
                    + " AND writer_version >= 2", PARTITION);
            assertTrue(firstV2 > 0, "v2 nodes committed");
            assertEquals(0, BackfillKillMicroIT.one(c, "SELECT count(*) FROM sync_commits WHERE partition = ?"
                    + " AND commit_seq > " + firstV2 + " AND (writer_version IS NULL OR writer_version < 2)",
                    PARTITION), "no commit by the old binary once the new one wrote");
        }
        MicroNode last = POOL.get(0);
        for (LoadClient client : clients) {
            // served rounds until its bootstrap (after the upgrade reset) has no page left; a v1 client upgrades first
            int served = 0;
            for (int i = 0; i < 40 && (served == 0 || client.codec.bootstrapState != null); i++) {
                if (client.round(last)) served++;
            }
            assertTrue(served > 0 && client.codec.bootstrapState == null, client.clientId + " caught up at the end");
            SyncTestClient fresh = new SyncTestClient(last.base(), "check-" + client.clientId, client.list);
            for (int page = 0; page < 40 && (page == 0 || fresh.bootstrapState != null); page++) {
                HttpResponse<byte[]> r = fresh.post(RequestEncoder.encode(new RequestMessage(1, List.of(
                        new ReqHeader(fresh.clientId, 2), new PullHeader(0, 0, 0,
                                PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                        fresh.subscription()))), false);
                assertEquals(200, r.statusCode());
                fresh.apply(ResponseDecoder.decode(r.body()));   // a bootstrap comes in pages
            }
            assertEquals(null, fresh.bootstrapState, "the fresh bootstrap completed");
            assertEquals(client.rows.get(), fresh.replica.size(), client.clientId + ": every acknowledged row");
            assertEquals(fresh.snapshot(), client.codec.snapshot(), client.clientId + " converged with the server");
        }
    }

    /** {@code rows} source rows in commits of 100 through {@code node}, by four seeders at once. */
    private static void seed(MicroNode node, int rows) throws Exception {
        int seeders = 4;
        int commits = rows / 100;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int s = 0; s < seeders; s++) {
            int first = s;
            Thread t = new Thread(() -> {
                try {
                    SyncTestClient seeder = new SyncTestClient(node.base(), "seeder-" + first, "roll-seed");
                    for (int r = first; r < commits; r += seeders) {
                        List<PushCommit.Operation> ops = new ArrayList<>();
                        for (int i = 0; i < 100; i++) {
                            String id = String.format("seed-%07d", r * 100 + i);
                            ops.add(PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id,
                                    "roll-seed", "Seed " + id, false, i)));
                        }
                        seeder.send(new RequestMessage(1, List.of(new ReqHeader(seeder.clientId, 1),
                                new PushCommit("seed-" + r, ops))));
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "seeder-" + s);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
        assertEquals(List.of(), failures, "seeding");
    }

    /** The readiness balancer: which pool nodes answer {@code health/ready} 200, every 250 ms until stopped. */
    private static void pollReadiness(AtomicBoolean stop) {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(2)).build();
        while (!stop.get()) {
            for (MicroNode n : List.copyOf(POOL)) {
                boolean ready;
                try {
                    ready = http.send(java.net.http.HttpRequest.newBuilder(n.base().resolve("health/ready"))
                                    .timeout(Duration.ofSeconds(2)).build(),
                            java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    ready = false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (ready) READY.add(n); else READY.remove(n);
            }
            READY.retainAll(POOL);
            LockSupport.parkNanos(250_000_000L);
        }
    }

    private static void awaitServed(Tally tally, int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (tally.served.get() < n && System.nanoTime() < deadline) Thread.sleep(50);
        assertTrue(tally.served.get() >= n, "the load runs: " + tally.served.get() + " " + tally.violations);
    }

    private static void awaitBatches(Connection c, long n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (BackfillKillMicroIT.one(c, "SELECT COALESCE(max(batches), 0) FROM sync_backfill_passes"
                + " WHERE partition = ? AND name = ?", PARTITION, NAME) < n) {
            if (System.nanoTime() > deadline) throw new AssertionError(n + " backfill batches never committed");
            Thread.sleep(20);
        }
    }
}

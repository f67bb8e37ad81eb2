package syncular.jakarta.realtime.bench;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.realtime.RealtimeHub;
import syncular.jakarta.realtime.RealtimeSession;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.realtime.SocketChannel;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.sync.Leases;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.sync.Validation;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;

/**
 * Realtime fanout benchmark driver (not a test; surefire never runs it): commit-to-delta latency through the real
 * path — SyncHandler push → pg_notify in the commit → the LISTEN feed → hub → per-session delta encoding → outbox —
 * with N sessions whose sockets are in-memory recorders (no container, no network), on one "node" and across two
 * (push through node A's storage, sessions on node B's hub and feed). Also the heap retained per idle session.
 * Prints Markdown rows for docs/benchmarks.md "## Realtime".
 *
 * <pre>mvn -o -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=syncular.jakarta.realtime.bench.RealtimeFanoutBench [-Dbench.sessions=100,1000,10000]</pre>
 */
public final class RealtimeFanoutBench {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final ScopeResolver ALL = identity -> Map.of("project_id", List.of("*"));
    private static final Clock CLOCK = System::currentTimeMillis;
    private static final int COMMITS = Integer.getInteger("bench.commits", 100);

    private RealtimeFanoutBench() { }

    /** A socket that records when each delta was handed to it. */
    static final class Recorder implements SocketChannel {
        final long[] at = new long[COMMITS + 16];
        int deltas;

        @Override
        public void sendText(String text, Consumer<Throwable> done) { done.accept(null); }

        @Override
        public synchronized void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            if (data.get(0) == 0 && deltas < at.length) at[deltas++] = System.nanoTime();
            done.accept(null);
        }

        @Override
        public void close(int code, String reason) { }
    }

    record Node(PostgresServerStorage storage, SyncHandler handler, PostgresCommitFeed feed, RealtimeHub hub,
                Thread thread) {
        static Node start(EmbeddedPostgresSupport.Pool db) throws InterruptedException {
            PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), CLOCK::nowMs);
            storage.ensureSchema(SCHEMA, List.of());
            SyncHandler handler = new SyncHandler(storage, () -> SCHEMA, List::of, ALL, CLOCK,
                    new SyncSettings(500, 256 * 1024, 8L * 1024 * 1024, 60_000, 1000,
            syncular.jakarta.sync.PartitionAdmission.Settings.DEFAULTS, 1000, 0, 1 << 20), null, Validation.NONE,
                    Leases.OFF);
            PostgresCommitFeed feed = new PostgresCommitFeed(db::rawConnection, db, 200, 1_000);
            RealtimeHub.Context ctx = new RealtimeHub.Context(storage, handler, SCHEMA, ALL, CLOCK, 1 << 20, syncular.jakarta.events.ServerEvents.NONE);
            RealtimeHub hub = new RealtimeHub(() -> Optional.of(ctx), feed, Runnable::run, Runnable::run,
                    RealtimeSettings.DEFAULTS);
            Thread t = new Thread(() -> feed.run(hub), "feed");
            t.start();
            while (!feed.listening()) Thread.sleep(10);
            return new Node(storage, handler, feed, hub, t);
        }

        void stop() throws InterruptedException {
            feed.close();
            thread.join(5_000);
        }
    }

    public static void main(String[] args) throws Exception {
        System.out.println("| sessions | nodes | commits | deltas | p50 ms | p95 ms | p99 ms | max ms |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        // -Dbench.sessions=100,1000,10000 (the default): the session counts measured, each on one node and two
        for (String level : System.getProperty("bench.sessions", "100,1000,10000").split(",")) {
            int sessions = Integer.parseInt(level.trim());
            for (int nodes : new int[] {1, 2}) run(sessions, nodes);
        }
        idleMemory(1_000);
        System.exit(0);
    }

    private static void run(int sessions, int nodeCount) throws Exception {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            Node a = Node.start(db);
            Node b = nodeCount == 2 ? Node.start(db) : a;
            String partition = EmbeddedPostgresSupport.partition("bench");
            Identity actor = new Identity("bench", partition);
            List<Recorder> recorders = connect(b, actor, sessions);
            long[] t0 = new long[COMMITS];
            for (int i = 0; i < COMMITS; i++) {
                PushCommit commit = new PushCommit("w-" + i, List.of(PushCommit.Operation.upsert("tasks", "r" + i,
                        null, TestSchemas.taskPayload(SCHEMA, "r" + i, "p1", "t" + i, false))));
                t0[i] = System.nanoTime();
                a.handler().handle(actor, new RequestMessage(1, List.of(new ReqHeader("writer", 1), commit)));
                Thread.sleep(10);
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (System.nanoTime() < deadline && recorders.stream().anyMatch(r -> r.deltas < COMMITS)) {
                Thread.sleep(20);
            }
            List<Double> ms = new ArrayList<>();
            for (Recorder r : recorders) {
                for (int i = 0; i < r.deltas && i < COMMITS; i++) ms.add((r.at[i] - t0[i]) / 1e6);
            }
            double[] v = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf("| %,d | %d | %d | %,d | %.1f | %.1f | %.1f | %.1f |%n", sessions, nodeCount, COMMITS,
                    v.length, pct(v, 50), pct(v, 95), pct(v, 99), v.length == 0 ? Double.NaN : v[v.length - 1]);
            a.stop();
            if (b != a) b.stop();
        }
    }

    private static List<Recorder> connect(Node node, Identity actor, int sessions) {
        List<Recorder> recorders = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            String client = "c" + i;
            List<RequestFrame> frames = List.of(new ReqHeader(client, 1),
                    new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                    new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, -1, null));
            node.handler().handle(actor, new RequestMessage(1, frames));
            Recorder r = new Recorder();
            node.hub().connect(actor, client, r);
            recorders.add(r);
        }
        return recorders;
    }

    /** Heap retained per idle session object graph (not the container's socket buffers). */
    private static void idleMemory(int sessions) throws Exception {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            Node n = Node.start(db);
            Identity actor = new Identity("bench", EmbeddedPostgresSupport.partition("mem"));
            connect(n, actor, 10);   // warm everything up
            long before = usedAfterGc();
            List<Recorder> kept = connect(n, new Identity("bench", EmbeddedPostgresSupport.partition("mem2")), sessions);
            long after = usedAfterGc();
            System.out.printf("%nidle sessions: %,d; heap retained per session: %,d bytes (%d recorders kept)%n",
                    sessions, (after - before) / sessions, kept.size());
            n.stop();
        }
    }

    private static long usedAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static double pct(double[] sorted, int p) {
        if (sorted.length == 0) return Double.NaN;
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(i, sorted.length - 1))];
    }
}

package syncular.jakarta.sync.bench;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Mixed soak (issue 15; NOT a test), target-neutral like {@link SyncLoadDriver} and shaped like the upstream load
 * suite's {@code mixed-soak}: {@code --seed} rows in the storm project, then {@code --vus} clients for
 * {@code --seconds}, by role ({@code vu % 5}): 0–2 readers (bootstrap the storm project over HTTP, then incremental
 * pulls of it, 15 ms apart), 3 writers (push one upsert into one of 8 writer projects and pull that project in the
 * same request, 15 ms apart; 40 hot rows each), 4 realtime clients (catch up over a WebSocket, then a socket round
 * every 30 ms). Upstream's background pruner is not driven: it calls a control route of the reference's load server
 * that a production server does not have (ours prunes on its retention timer). Reported per role: operations/s and
 * latency p50/p95/p99, and failures (an ERROR frame, a rejected push, an HTTP or socket failure).
 *
 * <p>Options: {@code --url=}, {@code --vus=30}, {@code --seconds=30}, {@code --seed=20000}, {@code --runs=1}.
 */
public final class MixedSoakBench {
    private static final String STORM = ReconnectStormBench.PROJECT;
    private static final int ACCEPT = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;

    private MixedSoakBench() { }

    /** One role's measured operations. */
    static final class Role {
        final String name;
        final ConcurrentLinkedQueue<Long> nanos = new ConcurrentLinkedQueue<>();

        Role(String name) { this.name = name; }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchSupport.options(args);
        URI base = BenchSupport.baseUrl(o);
        int vus = BenchSupport.intOption(o, "vus", 30);
        int seconds = BenchSupport.intOption(o, "seconds", 30);
        int seed = BenchSupport.intOption(o, "seed", 20000);
        int runs = BenchSupport.intOption(o, "runs", 1);
        System.out.printf("# MixedSoakBench %s vus=%d seconds=%d seed=%d%n", base, vus, seconds, seed);
        ImageBootstrapBench.seed(base, STORM, seed);
        System.out.printf("%-4s %-9s %10s %11s %9s %9s %9s %9s%n", "run", "role", "operations", "per second",
                "p50 ms", "p95 ms", "p99 ms", "failures");
        int failed = 0;
        for (int run = 1; run <= runs; run++) failed += run(base, vus, seconds, run);
        System.exit(failed > 0 ? 2 : 0);
    }

    private static int run(URI base, int vus, int seconds, int run) throws Exception {
        Role reads = new Role("read");
        Role writes = new Role("write");
        Role realtime = new Role("realtime");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failures = new AtomicLong();
        AtomicReference<Throwable> first = new AtomicReference<>();
        List<Thread> clients = new ArrayList<>();
        for (int v = 0; v < vus; v++) {
            int vu = v;
            String clientId = "soak-" + run + "-" + vu;
            Thread t = new Thread(() -> {
                try {
                    switch (vu % 5) {
                        case 3 -> write(base, clientId, "soak-w-" + (vu % 8), writes, stop);
                        case 4 -> realtime(base, clientId, realtime, stop);
                        default -> read(base, clientId, reads, stop);
                    }
                } catch (Exception | AssertionError e) {
                    failures.incrementAndGet();
                    first.compareAndSet(null, e);
                }
            }, "soak-" + v);
            clients.add(t);
        }
        long start = System.nanoTime();
        for (Thread t : clients) t.start();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        double wall = (System.nanoTime() - start) / 1e9;
        for (Thread t : clients) t.join(60_000);
        for (Role r : List.of(reads, writes, realtime)) {
            long[] v = r.nanos.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf("%-4d %-9s %10d %11.1f %9.2f %9.2f %9.2f %9s%n", run, r.name, v.length, v.length / wall,
                    BenchSupport.percentileMs(v, 0.50), BenchSupport.percentileMs(v, 0.95),
                    BenchSupport.percentileMs(v, 0.99), r == realtime ? String.valueOf(failures.get()) : "");
        }
        if (first.get() != null) {
            System.err.println("run " + run + ": first failure");
            first.get().printStackTrace();
            return 1;
        }
        return 0;
    }

    /** Bootstrap the storm project, then incremental pulls of it (each measured) until stopped. */
    private static void read(URI base, String clientId, Role role, AtomicBoolean stop) throws Exception {
        long cursor = pull(base, clientId, STORM, -1, List.of());
        while (!stop.get()) {
            long t0 = System.nanoTime();
            cursor = pull(base, clientId, STORM, cursor, List.of());
            if (!stop.get()) role.nanos.add(System.nanoTime() - t0);
            Thread.sleep(15);
        }
    }

    /** One upsert into the writer's project and a pull of that project in the same request, until stopped. */
    private static void write(URI base, String clientId, String project, Role role, AtomicBoolean stop)
            throws Exception {
        long cursor = pull(base, clientId, project, -1, List.of());
        for (long seq = 0; !stop.get(); seq++) {
            String id = project + "-s" + (seq % 40);
            PushCommit commit = new PushCommit(clientId + "-" + seq, List.of(PushCommit.Operation.upsert("tasks", id,
                    null, BenchSupport.task(id, project, "soak " + seq, seq % 2 == 0, seq % 5, seq))));
            long t0 = System.nanoTime();
            cursor = pull(base, clientId, project, cursor, List.of(commit));
            if (!stop.get()) role.nanos.add(System.nanoTime() - t0);
            Thread.sleep(15);
        }
    }

    /** Catch up over a socket, then one socket round every 30 ms (each measured) until stopped. */
    private static void realtime(URI base, String clientId, Role role, AtomicBoolean stop) throws Exception {
        ReconnectStormBench.Socket socket = ReconnectStormBench.Socket.open(base, clientId);
        try {
            long cursor = socket.catchUp(clientId, -1, true);
            while (!stop.get()) {
                long t0 = System.nanoTime();
                cursor = socket.catchUp(clientId, cursor, false);
                if (!stop.get()) role.nanos.add(System.nanoTime() - t0);
                Thread.sleep(30);
            }
        } finally {
            socket.close();
        }
    }

    /**
     * A request with {@code pushes} (if any) and a pull of {@code project} from {@code cursor}, repeated while the
     * subscription is bootstrapping; returns the new cursor. An ERROR frame or a push not applied fails.
     */
    private static long pull(URI base, String clientId, String project, long cursor, List<PushCommit> pushes)
            throws Exception {
        String token = null;
        List<PushCommit> pending = pushes;
        while (true) {
            List<RequestFrame> frames = new ArrayList<>();
            frames.add(new ReqHeader(clientId, 1));
            frames.addAll(pending);
            frames.add(new PullHeader(200, 10_000, 1, ACCEPT));
            frames.add(new Subscription("sub", "tasks", Map.of("project_id", List.of(project)), null, cursor, token));
            pending = List.of();
            for (ResponseFrame f : ResponseDecoder.decode(ImageBootstrapBench.postRaw(base,
                    new RequestMessage(1, frames))).frames()) {
                if (f instanceof ErrorFrame e) throw new IllegalStateException("error " + e.code());
                if (f instanceof PushResult p && p.status() != PushResult.Status.APPLIED) {
                    throw new IllegalStateException("push " + p.status());
                }
                if (f instanceof SubEnd e) {
                    cursor = e.nextCursor();
                    token = e.bootstrapStateJson();
                }
            }
            if (token == null) return cursor;
        }
    }
}

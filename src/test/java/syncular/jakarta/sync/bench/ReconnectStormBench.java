package syncular.jakarta.sync.bench;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.MessageScanner;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RealtimeControl;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Reconnect storm (issue 15; NOT a test), target-neutral like {@link SyncLoadDriver} and shaped like the upstream
 * load suite's {@code reconnect-storm} scenario: {@code --vus} realtime clients, each first connected and caught up
 * over its socket, then in a loop for {@code --seconds}: close, open a new WebSocket to {@code <base>realtime} with
 * its clientId, wait for {@code hello}, run one catch-up round over the socket (tag 0x01, a pull of the storm project
 * from its cursor: limitCommits 200), wait 20 ms. A writer pushes one upsert into the storm project every 10 ms over
 * HTTP the whole time, so every reconnect has real catch-up work. Reported: reconnects/s, and latency of connect +
 * hello + round (p50/p95/p99), failures (a round answered with ERROR, a socket error or timeout).
 *
 * <p>Options: {@code --url=} base URL (ours {@code http://localhost:8787/syncular/}, the reference's load server
 * {@code http://localhost:PORT/}), {@code --vus=40}, {@code --seconds=20}, {@code --seed=2000} rows in the storm
 * project before, {@code --runs=1}; other {@code --key=value} options of the side-by-side kit are ignored.
 */
public final class ReconnectStormBench {
    static final String PROJECT = "storm";
    /** Messages the sockets read in the current run (text, binary): what a reconnect costs on the wire. */
    static final AtomicLong TEXTS = new AtomicLong();
    static final AtomicLong BINARIES = new AtomicLong();

    private ReconnectStormBench() { }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchSupport.options(args);
        URI base = BenchSupport.baseUrl(o);
        int vus = BenchSupport.intOption(o, "vus", 40);
        int seconds = BenchSupport.intOption(o, "seconds", 20);
        int seed = BenchSupport.intOption(o, "seed", 2000);
        int runs = BenchSupport.intOption(o, "runs", 1);
        System.out.printf("# ReconnectStormBench %s vus=%d seconds=%d seed=%d%n", base, vus, seconds, seed);
        ImageBootstrapBench.seed(base, PROJECT, seed);
        System.out.printf("%-4s %12s %12s %9s %9s %9s %9s %9s %9s%n", "run", "reconnects", "per second", "p50 ms",
                "p95 ms", "p99 ms", "failures", "texts/rc", "bins/rc");
        for (int run = 1; run <= runs; run++) run(base, vus, seconds, run);
        System.exit(0);
    }

    private static void run(URI base, int vus, int seconds, int run) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failures = new AtomicLong();
        TEXTS.set(0);
        BINARIES.set(0);
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        Thread writer = new Thread(() -> {
            long n = 0;
            while (!stop.get()) {
                try {
                    String id = PROJECT + "-hot-" + (n % 50);
                    PushCommit commit = new PushCommit("w" + run + "-" + n++, List.of(PushCommit.Operation.upsert(
                            "tasks", id, null, BenchSupport.task(id, PROJECT, "hot " + n, n % 2 == 0, 1, n))));
                    ResponseDecoder.decode(ImageBootstrapBench.postRaw(base, new RequestMessage(1,
                            List.of(new ReqHeader("rc-writer", 1), commit))));
                    Thread.sleep(10);
                } catch (Exception e) {
                    failures.incrementAndGet();
                }
            }
        }, "rc-writer");
        writer.start();
        List<Thread> clients = new ArrayList<>();
        for (int v = 0; v < vus; v++) {
            String clientId = "rc-" + run + "-" + v;
            Thread t = new Thread(() -> {
                long cursor = -1;
                try {
                    // connected and caught up first: the "already connected" fleet
                    Socket s = Socket.open(base, clientId);
                    cursor = s.catchUp(clientId, cursor, true);
                    s.close();
                } catch (Exception e) {
                    failures.incrementAndGet();
                    return;
                }
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                        Socket s = Socket.open(base, clientId);
                        cursor = s.catchUp(clientId, cursor, false);
                        long took = System.nanoTime() - t0;
                        s.close();
                        if (!stop.get()) latencies.add(took);
                        Thread.sleep(20);
                    } catch (Exception e) {
                        failures.incrementAndGet();
                    }
                }
            }, "rc-" + v);
            clients.add(t);
        }
        long start = System.nanoTime();
        for (Thread t : clients) t.start();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        long end = System.nanoTime();
        for (Thread t : clients) t.join(30_000);
        writer.join(30_000);
        long[] v = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        double n = Math.max(1, v.length);
        System.out.printf("%-4d %12d %12.1f %9.2f %9.2f %9.2f %9d %9.2f %9.2f%n", run, v.length,
                v.length / ((end - start) / 1e9), BenchSupport.percentileMs(v, 0.50),
                BenchSupport.percentileMs(v, 0.95), BenchSupport.percentileMs(v, 0.99), failures.get(),
                TEXTS.get() / n, BINARIES.get() / n);
    }

    /**
     * One realtime socket, blocking on the caller's thread ({@link PlainWebSocket}): waits for hello, runs rounds
     * over it; deltas and other messages between are read past.
     */
    static final class Socket {
        private final PlainWebSocket ws;

        private Socket(PlainWebSocket ws) { this.ws = ws; }

        static Socket open(URI base, String clientId) throws Exception {
            URI uri = URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId);
            Socket s = new Socket(PlainWebSocket.connect(uri, 30_000));
            try {
                while (true) {
                    PlainWebSocket.Message m = s.read();
                    if (m.isText() && m.text().contains("\"hello\"")) return s;
                }
            } catch (Exception e) {
                s.close();
                throw e;
            }
        }

        /** Rounds from {@code cursor} until the subscription is caught up (or one round); returns the new cursor. */
        long catchUp(String clientId, long cursor, boolean untilDone) throws Exception {
            String token = null;
            while (true) {
                byte[] body = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                        new PullHeader(200, 10_000, 1, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                        new Subscription("storm", "tasks", Map.of("project_id", List.of(PROJECT)), null, cursor,
                                token))));
                ws.sendTagged(RealtimeControl.TAG_ROUND, body);
                for (ResponseFrame f : roundResponse().frames()) {
                    if (f instanceof ErrorFrame e) throw new IllegalStateException("round error " + e.code());
                    if (f instanceof SubEnd e) {
                        cursor = e.nextCursor();
                        token = e.bootstrapStateJson();
                    }
                }
                if (!untilDone || token == null) return cursor;
            }
        }

        /** The round's response: its tag-0x01 messages joined until the message is whole (§8.7). */
        private ResponseMessage roundResponse() throws Exception {
            MessageScanner scanner = new MessageScanner(64L << 20);
            while (true) {
                PlainWebSocket.Message m = read();
                byte[] b = m.binary();
                if (b == null || b.length == 0 || b[0] != 0x01) continue;
                Optional<MessageScanner.Scanned> done = scanner.feed(b, 1, b.length - 1);
                if (done.isPresent()) return ResponseDecoder.decode(done.get().message());
            }
        }

        private PlainWebSocket.Message read() throws Exception {
            PlainWebSocket.Message m = ws.read();
            (m.isText() ? TEXTS : BINARIES).incrementAndGet();
            return m;
        }

        void close() { ws.close(); }
    }
}

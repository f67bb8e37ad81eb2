package syncular.jakarta.sync.bench;

import static syncular.jakarta.sync.bench.BenchSupport.percentileMs;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Load driver for {@code POST /sync} (issue #5 benchmark; NOT a test): N concurrent clients, each on its own list of
 * the demo {@code todos} schema, repeat one round trip = a PUSH_COMMIT of one upsert plus a pull of its list from its
 * cursor (the shape of an app's sync loop), over one HTTP/1.1 connection pool. Reports round trips/s and latency
 * percentiles per concurrency level. Every response is decoded and checked (applied push, a SUB_END), so a failing
 * server cannot look fast.
 *
 * <p>Run against a server with fixed auth and the demo schema (the {@code mvn -Prun} default):
 * {@code java -cp target/test-classes:target/classes syncular.jakarta.sync.bench.SyncLoadDriver
 * http://localhost:8787/syncular/ 20 1,10,50}; arguments: base URL, seconds per level, concurrency levels.
 */
public final class SyncLoadDriver {
    private SyncLoadDriver() { }

    public static void main(String[] args) throws Exception {
        URI sync = URI.create(args.length > 0 ? args[0] : "http://localhost:8787/syncular/").resolve("sync");
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int[] levels = Arrays.stream((args.length > 2 ? args[2] : "1,10,50").split(",")).mapToInt(Integer::parseInt)
                .toArray();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
        String run = Long.toHexString(System.nanoTime());
        System.out.printf("%-8s %10s %12s %9s %9s %9s %9s%n", "clients", "rounds", "rounds/s", "p50 ms", "p95 ms",
                "p99 ms", "max ms");
        for (int clients : levels) {
            level(http, sync, run + "-" + clients, clients, 3, false);          // warm-up, not reported
            level(http, sync, run + "-" + clients, clients, seconds, true);
        }
    }

    private static void level(HttpClient http, URI sync, String run, int clients, int seconds, boolean report)
            throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failures = new AtomicLong();
        List<long[]> perClient = new ArrayList<>();
        int[] counts = new int[clients];
        CountDownLatch done = new CountDownLatch(clients);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            long[][] latencies = {new long[1024]};
            perClient.add(null);
            int index = c;
            Thread t = new Thread(() -> {
                String list = "bench-" + run + "-" + index + (report ? "" : "-warm");
                String clientId = "bench-client-" + list;
                long cursor = -1;
                int n = 0;
                try {
                    while (!stop.get()) {
                        String id = list + "-row-" + (n % 100);
                        List<RequestFrame> frames = List.of(new ReqHeader(clientId, 1),
                                new PushCommit(list + "-c" + n, List.of(PushCommit.Operation.upsert("todos", id, null,
                                        BenchSupport.todo(id, list, "title " + n, false, n)))),
                                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS),
                                new Subscription("s", "todos", Map.of("list_id", List.of(list)), null, cursor, null));
                        byte[] body = RequestEncoder.encode(new RequestMessage(1, frames));
                        long start = System.nanoTime();
                        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(sync)
                                .header("Content-Type", "application/vnd.syncular.sync.v2")
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                HttpResponse.BodyHandlers.ofByteArray());
                        long elapsed = System.nanoTime() - start;
                        if (r.statusCode() != 200) {
                            failures.incrementAndGet();
                            continue;
                        }
                        ResponseMessage m = ResponseDecoder.decode(r.body());
                        boolean applied = false;
                        for (ResponseFrame f : m.frames()) {
                            if (f instanceof PushResult p) applied = p.status() == PushResult.Status.APPLIED;
                            if (f instanceof SubEnd e) cursor = e.nextCursor();
                        }
                        if (!applied) {
                            failures.incrementAndGet();
                            continue;
                        }
                        if (n == latencies[0].length) latencies[0] = Arrays.copyOf(latencies[0], n * 2);
                        latencies[0][n++] = elapsed;
                    }
                } catch (Exception e) {
                    failures.incrementAndGet();
                    System.err.println("client " + index + ": " + e);
                } finally {
                    synchronized (perClient) {
                        counts[index] = n;
                        perClient.set(index, latencies[0]);
                    }
                    done.countDown();
                }
            }, "bench-client-" + c);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        long began = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        done.await();
        double wall = (System.nanoTime() - began) / 1e9;
        if (!report) return;
        synchronized (perClient) {
            report(clients, counts, perClient, wall, failures.get());
        }
    }

    private static void report(int clients, int[] counts, List<long[]> perClient, double wall, long failures) {
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int at = 0;
        for (int c = 0; c < clients; c++) {
            System.arraycopy(perClient.get(c), 0, all, at, counts[c]);
            at += counts[c];
        }
        Arrays.sort(all);
        System.out.printf("%-8d %10d %12.1f %9.2f %9.2f %9.2f %9.2f%s%n", clients, total, total / wall,
                percentileMs(all, 0.50), percentileMs(all, 0.95), percentileMs(all, 0.99),
                all.length == 0 ? 0 : all[all.length - 1] / 1e6,
                failures == 0 ? "" : "   FAILURES: " + failures);
    }

}

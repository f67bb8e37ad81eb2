package syncular.jakarta.realtime.bench;

import static syncular.jakarta.sync.bench.BenchSupport.percentileMs;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import syncular.jakarta.sync.bench.BenchSupport;
import syncular.jakarta.sync.bench.PlainHttp;
import syncular.jakarta.sync.bench.PlainWebSocket;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
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
 * Commit-to-delta latency through real WebSockets (issue #8 benchmark; NOT a test). N WebSocket clients
 * ({@link PlainWebSocket}) connect to {@code /realtime} of one server, each on a thread of its own until it has
 * registered, then read by one {@link SelectorReader} (or, with {@code -Dbench.readers=threads}, by its own thread
 * to the end); each registers a subscription
 * on one shared list by a socket round (§8.7) and acks its cursor (the post-round ack, §8.2); then C one-row commits
 * are pushed over one persistent HTTP connection to a (possibly different) server, one every {@code interval} ms.
 * t0 = just before each push is sent; t1 = when a socket has received the whole delta message carrying that
 * commitSeq. One latency per (socket, commit); every socket must receive every commit, or the run reports what was
 * missing. Also reports the
 * server's memory per idle registered connection (VmRSS and, after a forced GC through {@code jcmd}, heap used;
 * before the sockets → after), the pushes' round trips, and the CPU this driver and the socket server (when it runs
 * on this machine) used while the timed commits were pushed and fanned out. With {@code -Dbench.warmup=W}, W
 * commits are pushed and awaited first, untimed.
 *
 * <p>Against servers with fixed auth and the demo schema (the {@code mvn -Prun} default): {@code java -cp
 * target/test-classes:target/classes syncular.jakarta.realtime.bench.RealtimeSocketBench <push base> <socket base>
 * <sockets> [commits] [interval ms]}.
 */
public final class RealtimeSocketBench {
    private RealtimeSocketBench() { }

    /**
     * One client socket on a thread of its own ({@link PlainWebSocket}, blocking): connects, reads {@code hello},
     * registers by a socket round and acks its cursor, then records the arrival time of every delta by commitSeq
     * until the connection ends. The JDK {@code WebSocket} handed every message between its selector and a callback
     * thread, which at 1,000 sockets and 10,000 messages a second on the two cores the server also uses was part of
     * what this benchmark measured.
     */
    static final class Client implements Runnable {
        final URI uri;
        final String clientId;
        final Map<String, List<String>> scope;
        final CompletableFuture<Void> registered = new CompletableFuture<>();
        /**
         * The delta messages as they arrived (when, and the message after its tag), decoded only after the run: a
         * decode per message on the reading thread was CPU the driver took from the two cores the server uses.
         */
        final java.util.Queue<Arrival> received = new java.util.concurrent.ConcurrentLinkedQueue<>();
        final AtomicInteger deltas = new AtomicInteger();
        final AtomicInteger wakes = new AtomicInteger();
        /** The selector that reads the socket once it is registered; null: this client's thread reads it. */
        final SelectorReader reader;
        volatile PlainWebSocket ws;

        Client(URI uri, String clientId, Map<String, List<String>> scope, SelectorReader reader) {
            this.uri = uri;
            this.clientId = clientId;
            this.scope = scope;
            this.reader = reader;
        }

        /** commitSeq → when its delta arrived (the first time). */
        Map<Long, Long> arrivals() {
            Map<Long, Long> out = new java.util.HashMap<>();
            for (Arrival a : received) {
                ResponseMessage delta = ResponseDecoder.decode(Arrays.copyOfRange(a.message(), 1,
                        a.message().length));
                for (ResponseFrame f : delta.frames()) {
                    if (f instanceof CommitFrame c) out.putIfAbsent(c.commitSeq(), a.nanos());
                }
            }
            return out;
        }

        /** A message the socket received at {@code now}: a delta is kept, a wake-up counted. */
        void received(boolean text, byte[] payload, long now) {
            if (text) {
                if (new String(payload, StandardCharsets.UTF_8).contains("\"sync\"")) wakes.incrementAndGet();
                return;
            }
            if (payload[0] == RealtimeControl.TAG_ROUND) return;
            received.add(new Arrival(now, payload));
            deltas.incrementAndGet();
        }

        @Override
        public void run() {
            PlainWebSocket socket = null;
            try {
                socket = reader == null ? PlainWebSocket.connect(uri, (int) TimeUnit.MINUTES.toMillis(10))
                        : PlainWebSocket.connectChannel(uri, (int) TimeUnit.MINUTES.toMillis(10));
                ws = socket;
                PlainWebSocket.Message hello = socket.read();
                if (!hello.isText() || !hello.text().contains("\"hello\"")) {
                    throw new IOException("expected hello, got " + hello);
                }
                byte[] request = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                        new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS),
                        new Subscription("s", "todos", scope, null, -1, null))));
                socket.sendTagged(RealtimeControl.TAG_ROUND, request);
                long cursor = -1;
                while (cursor < 0) {
                    PlainWebSocket.Message m = socket.read();
                    if (m.isText() || m.binary()[0] != RealtimeControl.TAG_ROUND) continue;
                    ResponseMessage response = ResponseDecoder.decode(Arrays.copyOfRange(m.binary(), 1,
                            m.binary().length));
                    cursor = response.frames().stream().filter(SubEnd.class::isInstance)
                            .mapToLong(f -> ((SubEnd) f).nextCursor()).findFirst().orElseThrow();
                }
                socket.sendText("{\"type\":\"ack\",\"cursor\":" + cursor + "}");
                if (reader != null) {
                    reader.add(socket.detach(), this::received);   // read from here on by the selector's thread
                    socket = null;
                    ws = null;
                    registered.complete(null);
                    return;
                }
                registered.complete(null);
                while (true) {
                    PlainWebSocket.Message m = socket.read();
                    long now = System.nanoTime();
                    received(m.isText(), m.isText() ? m.text().getBytes(StandardCharsets.UTF_8) : m.binary(), now);
                }
            } catch (IOException | RuntimeException e) {
                // the end of the run closes the socket (EOF, or the socket closed under the read)
                registered.completeExceptionally(e);
            } finally {
                if (socket != null) socket.close();
            }
        }
    }

    /** A delta message as it arrived: when ({@link System#nanoTime()}) and its bytes, tag included. */
    record Arrival(long nanos, byte[] message) { }

    public static void main(String[] args) throws Exception {
        URI pushBase = URI.create(args[0]);
        URI socketBase = URI.create(args[1]);
        int sockets = Integer.parseInt(args[2]);
        int commits = args.length > 3 ? Integer.parseInt(args[3]) : 100;
        int interval = args.length > 4 ? Integer.parseInt(args[4]) : 20;
        String list = "rt-" + Long.toHexString(System.nanoTime());
        Map<String, List<String>> scope = Map.of("list_id", List.of(list));
        Optional<ProcessHandle> socketServer = serverOn(socketBase.getPort());

        // one persistent blocking connection for the pushes: the JDK HttpClient's hand-offs to its selector thread
        // added about 2.7 ms to every push (and so to every latency) on this 2-vCPU VM, 2026-12-06
        PlainHttp http = new PlainHttp(pushBase.resolve("sync"), "application/vnd.syncular.sync.v2", 30_000);
        long[] before = memory(socketServer);
        // -Dbench.readers=threads: every socket read by a thread of its own to the end (the driver before 2026-12-06)
        SelectorReader reader = "threads".equals(System.getProperty("bench.readers")) ? null : new SelectorReader();
        if (reader != null) {
            Thread t = new Thread(reader, "selector");
            t.setDaemon(true);
            t.start();
        }
        List<Client> clients = new ArrayList<>();
        long connectStart = System.nanoTime();
        for (int i = 0; i < sockets; i++) {
            String clientId = list + "-c" + i;
            URI uri = URI.create(socketBase.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId);
            Client c = new Client(uri, clientId, scope, reader);
            Thread t = new Thread(null, c, "socket-" + i, 256 * 1024);
            t.setDaemon(true);
            t.start();
            c.registered.get(60, TimeUnit.SECONDS);
            clients.add(c);
        }
        double connectSeconds = (System.nanoTime() - connectStart) / 1e9;
        Thread.sleep(2000);   // acks persisted, registrations settled
        long[] after = memory(socketServer);

        // -Dbench.warmup=W: W commits first, the same way, neither timed nor counted (this driver is a fresh JVM each
        // run: without them its first commits are read by code still being compiled, on the cores the server uses)
        int warmup = Integer.getInteger("bench.warmup", 0);
        for (int n = 0; n < warmup; n++) push(http, list, "warm-" + n, n, interval);
        awaitDeltas(clients, warmup);

        Map<Long, Long> sentAt = new ConcurrentHashMap<>();
        long[] pushes = new long[commits];
        // CPU while the commits are pushed and fanned out (both share this machine's cores): this process, and the
        // socket server when it runs here
        Duration driverCpu0 = cpu(Optional.of(ProcessHandle.current()));
        Duration serverCpu0 = cpu(socketServer);
        for (int n = 0; n < commits; n++) {
            long[] pushed = push(http, list, String.valueOf(n), n, interval);
            pushes[n] = pushed[2];
            sentAt.put(pushed[0], pushed[1]);
        }
        awaitDeltas(clients, warmup + commits);   // a delta message per commit, each socket (decoded and matched below)

        Duration driverCpu = cpu(Optional.of(ProcessHandle.current())).minus(driverCpu0);
        Duration serverCpu = cpu(socketServer).minus(serverCpu0);
        long[] latencies = new long[sockets * commits];
        int n = 0;
        int missing = 0;
        for (Client c : clients) {
            Map<Long, Long> arrivals = c.arrivals();
            for (Map.Entry<Long, Long> sent : sentAt.entrySet()) {
                Long arrived = arrivals.get(sent.getKey());
                if (arrived == null) missing++;
                else latencies[n++] = arrived - sent.getValue();
            }
        }
        long[] got = Arrays.copyOf(latencies, n);
        Arrays.sort(got);
        int wakes = clients.stream().mapToInt(c -> c.wakes.get()).sum();
        System.out.printf("sockets %d (connected and registered in %.1f s, read by %s), commits %d every %d ms, "
                + "push → %s, sockets on %s%n", sockets, connectSeconds,
                reader == null ? "a thread each" : "a selector", commits, interval, pushBase, socketBase);
        System.out.printf("deltas %,d  missing %d  wakes %d  p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms%n",
                got.length, missing, wakes, percentileMs(got, 0.50), percentileMs(got, 0.95),
                percentileMs(got, 0.99),
                got.length == 0 ? 0 : got[got.length - 1] / 1e6);
        System.out.printf("CPU while pushed and fanned out: driver %.2f s, socket server %.2f s (%.1f / %.1f µs a "
                + "delta)%n", driverCpu.toMillis() / 1e3, serverCpu.toMillis() / 1e3,
                driverCpu.toNanos() / 1e3 / Math.max(1, got.length),
                serverCpu.toNanos() / 1e3 / Math.max(1, got.length));
        Arrays.sort(pushes);
        System.out.printf("push round trips (t0 to the push's response, within the latencies above): p50 %.2f ms  "
                + "p95 %.2f ms%n", percentileMs(pushes, 0.50), percentileMs(pushes, 0.95));
        if (socketServer.isPresent()) {
            System.out.printf("socket server memory: RSS %d → %d MiB (%.1f KiB per connection), heap used after GC "
                    + "%d → %d MiB (%.1f KiB per connection)%n", before[0] / 1024, after[0] / 1024,
                    (after[0] - before[0]) / (double) sockets, before[1] / 1024, after[1] / 1024,
                    (after[1] - before[1]) / (double) sockets);
        }
        if (reader != null) {
            reader.closeAll();
        } else {
            for (Client c : clients) c.ws.close();
        }
        http.close();
        Thread.sleep(500);
    }


    /**
     * One one-row commit pushed into {@code list}, then a sleep to {@code interval} ms after it was sent: answers
     * {commitSeq, t0 (just before the push was sent), the push's round trip}.
     */
    private static long[] push(PlainHttp http, String list, String n, int position, int interval) throws Exception {
        String id = list + "-row-" + n;
        byte[] body = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(list + "-writer", 1),
                new PushCommit(list + "-w" + n, List.of(PushCommit.Operation.upsert("todos", id, null,
                        BenchSupport.todo(id, list, "realtime " + n, false, position)))))));
        long t0 = System.nanoTime();
        PlainHttp.Response r = http.post(body);
        if (r.status() != 200) throw new IllegalStateException("push: HTTP " + r.status());
        PushResult p = (PushResult) ResponseDecoder.decode(r.body()).frames().stream()
                .filter(PushResult.class::isInstance).findFirst().orElseThrow();
        if (p.status() != PushResult.Status.APPLIED) throw new IllegalStateException("push " + p.status());
        long[] pushed = {p.commitSeq(), t0, System.nanoTime() - t0};
        // one sleep to the next push (a 1 ms sleep loop woke this thread ~100 times a commit on the shared cores)
        long wait = t0 + interval * 1_000_000L - System.nanoTime();
        if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
        return pushed;
    }

    /** Waits up to 30 s for every client to have received {@code deltas} delta messages. */
    private static void awaitDeltas(List<Client> clients, int deltas) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && clients.stream().anyMatch(c -> c.deltas.get() < deltas)) {
            Thread.sleep(50);
        }
    }

    /** A process's CPU time so far (zero when unknown or not on this machine). */
    private static Duration cpu(Optional<ProcessHandle> process) {
        return process.flatMap(p -> p.info().totalCpuDuration()).orElse(Duration.ZERO);
    }

    private static Optional<ProcessHandle> serverOn(int port) {
        return ProcessHandle.allProcesses().filter(p -> p.info().commandLine()
                .map(c -> c.contains("payara-micro") && c.contains("--port " + port)).orElse(false)).findFirst();
    }

    /** {VmRSS KiB, heap used KiB after a full GC}, or zeros when the server is not a local process. */
    private static long[] memory(Optional<ProcessHandle> server) throws IOException, InterruptedException {
        if (server.isEmpty()) return new long[] {0, 0};
        long pid = server.get().pid();
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        run(jcmd, String.valueOf(pid), "GC.run");
        long heap = 0;
        for (String line : run(jcmd, String.valueOf(pid), "GC.heap_info").split("\n")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("total \\d+K, used (\\d+)K").matcher(line);
            if (m.find()) heap += Long.parseLong(m.group(1));
        }
        long rss = 0;
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        return new long[] {rss, heap};
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        return out;
    }
}

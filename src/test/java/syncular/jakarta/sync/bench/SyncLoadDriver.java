package syncular.jakarta.sync.bench;

import static syncular.jakarta.sync.bench.BenchSupport.percentileMs;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * Load driver for {@code POST <base>sync} (NOT a test; surefire never runs it), target-neutral: it drives our server
 * or the upstream TypeScript reference's load server ({@code load/src/server.ts}) with the same load. N concurrent
 * virtual clients, each owning one scope value (a project of the {@code tasks} table, or a list of the demo
 * {@code todos} table), repeat one round = one request with a PUSH_COMMIT of one upsert (row ids cycling over 100
 * per client, so inserts then updates) plus a PULL_HEADER and a subscription of the client's own scope from its
 * cursor, wire version 1 (an app's sync loop), each client on its own persistent HTTP/1.1 connection
 * ({@link PlainHttp}). Every response is decoded and checked (no ERROR frame, no schema floor, push
 * {@code applied}, the subscription active and closed by a SUB_END, cursor carried and never moving back), so a
 * failing server cannot look fast; failures are counted and printed.
 *
 * <p>Options ({@code --key=value}):
 * <ul>
 *   <li>{@code --url=} base URL; POSTs go to {@code <base>sync} (ours {@code http://localhost:8787/syncular/},
 *       the reference {@code http://localhost:PORT/})</li>
 *   <li>{@code --schema=tasks|todos} (default tasks: the reference load fixture's table, scope
 *       {@code project:{project_id}}; todos: the demo schema, scope {@code list:{list_id}})</li>
 *   <li>{@code --auth=Name: value} a header sent on every request (default none)</li>
 *   <li>{@code --clients=10,50} levels, {@code --seconds=15} per measured run, {@code --warmup=5} once per level
 *       (not reported), {@code --runs=3} measured runs per level (each reported, then a median line)</li>
 *   <li>{@code --server-pid=} report that process's CPU (utime+stime of it and its live descendants, from
 *       /proc) over each measured window, as percent of one core; {@code --db-pid=} the same for the database
 *       (the postmaster: its backends are its children)</li>
 *   <li>{@code --pg=jdbc:postgresql://host:port/db?user=..} read {@code pg_stat_database} (xact_commit +
 *       xact_rollback of that database) and, if the extension is installed, {@code pg_stat_statements} (sum of
 *       calls, this driver's own queries excluded) around each window: transactions and statements per round</li>
 *   <li>{@code --roundtrip-counter=host:port} the control port of {@link PgRoundTripProxy}: database round trips
 *       per round</li>
 * </ul>
 * The old positional form {@code URL SECONDS LEVELS} still works and means the demo {@code todos} schema, a 3 s
 * warm-up and one run, as before.
 *
 * <p>Output: one line per run ({@code run} = 1..N) and a {@code median} line per level (median of each column;
 * its failures column is the sum over the runs). A column that was not asked for prints {@code -}.
 */
public final class SyncLoadDriver {
    private static final String MARK = "syncload-driver";
    private static final int ROWS_PER_CLIENT = 100;

    private SyncLoadDriver() { }

    /** The table a virtual client writes and pulls. */
    enum Schema {
        TASKS("tasks", "project_id", "project"), TODOS("todos", "list_id", "list");

        final String table;
        final String scopeVariable;
        final String ownerPrefix;

        Schema(String table, String scopeVariable, String ownerPrefix) {
            this.table = table;
            this.scopeVariable = scopeVariable;
            this.ownerPrefix = ownerPrefix;
        }

        byte[] row(String id, String owner, int n) {
            return this == TASKS
                    ? BenchSupport.task(id, owner, "load " + id + " @" + n, n % 2 == 0, n % 5, 1_750_000_000_000L + n)
                    : BenchSupport.todo(id, owner, "title " + n, false, n);
        }
    }

    /** {@code prime}: seconds of unmeasured load at the highest level before the first level (a JIT's warm-up). */
    record Options(URI sync, Schema schema, String authName, String authValue, int[] levels, int seconds, int warmup,
            int runs, Long serverPid, Long dbPid, String pg, String roundTripCounter, int prime) { }

    public static void main(String[] args) throws Exception {
        Options o = parse(args);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
        Meters meters = new Meters(o, http);
        String run = Long.toHexString(System.currentTimeMillis());
        System.out.printf(Locale.ROOT,
                "# SyncLoadDriver %s schema=%s clients=%s seconds=%d warmup=%d runs=%d prime=%d wire=1%s%n",
                o.sync(), o.schema().name().toLowerCase(Locale.ROOT), Arrays.toString(o.levels()).replace(" ", ""),
                o.seconds(), o.warmup(), o.runs(), o.prime(),
                o.authName() == null ? "" : " auth-header=" + o.authName());
        System.out.println("# " + meters.describe());
        System.out.println("# load average at start: " + loadAverage());
        if (o.pg() != null || o.roundTripCounter() != null || o.serverPid() != null) {
            // what the server does with no load (background jobs, pool checks): it rides along in every window
            Meters.Sample before = meters.sample(false);
            long t0 = System.nanoTime();
            Thread.sleep(3000);
            Meters.Sample after = meters.sample(false);
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "# idle for %.1f s before the load: server cpu %s%%, db cpu %s%%, %s tx/s, "
                    + "%s statements/s, %s round trips/s (background; included in the per-round numbers)%n", s,
                    rate(before.serverTicks(), after.serverTicks(), s, 100.0 / meters.clockTicks),
                    rate(before.dbTicks(), after.dbTicks(), s, 100.0 / meters.clockTicks),
                    rate(before.transactions(), after.transactions(), s, 1),
                    rate(before.statements(), after.statements(), s, 1),
                    rate(before.roundTrips(), after.roundTrips(), s, 1));
        }
        System.out.printf(Locale.ROOT, "%-8s %10s %12s %9s %9s %9s %9s %8s %8s %8s %9s %10s %9s %8s  %s%n", "clients",
                "rounds", "rounds/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "failures", "srv-cpu%", "db-cpu%",
                "tx/round", "stmt/round", "rt/round", "drv-cpu%", "run");
        boolean anyFailure = false;
        if (o.prime() > 0) {
            // a server that compiles its request path as it runs (a JVM) is measured warm, not while it compiles:
            // its own clients and rows, so no measured client starts with a history
            int max = Arrays.stream(o.levels()).max().orElse(1);
            List<VClient> primers = new ArrayList<>();
            for (int c = 0; c < max; c++) {
                String owner = o.schema().ownerPrefix + "-" + run + "-prime-" + String.format("%05d", c);
                primers.add(new VClient("bench-client-" + owner, owner, o));
            }
            Phase primed = phase(o, primers, o.prime());
            primers.forEach(VClient::close);
            System.out.printf(Locale.ROOT, "# primed with %d clients for %d s: %d rounds, %d failures%n", max,
                    o.prime(), primed.latencies().length, primed.failures());
        }
        for (int clients : o.levels()) {
            List<VClient> vclients = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                String owner = o.schema().ownerPrefix + "-" + run + "-" + clients + "-" + String.format("%05d", c);
                vclients.add(new VClient("bench-client-" + owner, owner, o));
            }
            if (o.warmup() > 0) {
                Phase warm = phase(o, vclients, o.warmup());
                if (warm.failures() > 0) {
                    System.out.println("# warm-up at " + clients + " clients: " + warm.failures() + " FAILURES");
                    printReasons(warm);
                }
            }
            List<Row> rows = new ArrayList<>();
            for (int r = 1; r <= o.runs(); r++) {
                Meters.Sample before = meters.sample(true);
                Phase p = phase(o, vclients, o.seconds());
                Meters.Sample after = meters.sample(true);
                Row row = Row.of(clients, p, before, after, meters);
                rows.add(row);
                System.out.println(row.format(String.valueOf(r)));
                if (p.failures() > 0) {
                    anyFailure = true;
                    printReasons(p);
                }
            }
            vclients.forEach(VClient::close);
            if (o.runs() > 1) System.out.println(Row.median(rows).format("median"));
            System.out.flush();
        }
        System.out.println("# load average at end: " + loadAverage());
        meters.close();
        System.exit(anyFailure ? 2 : 0);
    }

    private static Options parse(String[] args) {
        if (args.length > 0 && !args[0].startsWith("--")) { // the old positional form: URL SECONDS LEVELS (todos)
            URI base = URI.create(args[0]);
            int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
            int[] levels = levels(args.length > 2 ? args[2] : "1,10,50");
            return new Options(base.resolve("sync"), Schema.TODOS, null, null, levels, seconds, 3, 1, null, null, null,
                    null, 0);
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) throw new IllegalArgumentException("expected --key=value, got " + a);
            m.put(a.substring(2, eq), a.substring(eq + 1));
        }
        List<String> known = List.of("url", "schema", "auth", "clients", "seconds", "warmup", "runs", "server-pid",
                "db-pid", "pg", "roundtrip-counter", "prime");
        for (String k : m.keySet()) {
            if (!known.contains(k)) throw new IllegalArgumentException("unknown option --" + k + "; known: " + known);
        }
        String url = m.getOrDefault("url", "http://localhost:8787/syncular/");
        if (!url.endsWith("/")) url = url + "/";
        Schema schema = Schema.valueOf(m.getOrDefault("schema", "tasks").toUpperCase(Locale.ROOT));
        String authName = null;
        String authValue = null;
        String auth = blankToNull(m.get("auth"));
        if (auth != null) {
            int colon = auth.indexOf(':');
            if (colon <= 0) throw new IllegalArgumentException("--auth must be a header line 'Name: value'");
            authName = auth.substring(0, colon).trim();
            authValue = auth.substring(colon + 1).trim();
        }
        String pid = blankToNull(m.get("server-pid"));
        String dbPid = blankToNull(m.get("db-pid"));
        return new Options(URI.create(url).resolve("sync"), schema, authName, authValue,
                levels(m.getOrDefault("clients", "10,50")), Integer.parseInt(m.getOrDefault("seconds", "15")),
                Integer.parseInt(m.getOrDefault("warmup", "5")), Math.max(1, Integer.parseInt(m.getOrDefault("runs", "3"))),
                pid == null ? null : Long.valueOf(pid), dbPid == null ? null : Long.valueOf(dbPid),
                blankToNull(m.get("pg")), blankToNull(m.get("roundtrip-counter")),
                Integer.parseInt(m.getOrDefault("prime", "0")));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private static int[] levels(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).mapToInt(Integer::parseInt)
                .toArray();
    }

    /**
     * One virtual client; its cursor and write sequence carry over from the warm-up into every measured run. It owns
     * one persistent connection ({@link PlainHttp}), as an app's sync loop does.
     */
    static final class VClient implements AutoCloseable {
        final String clientId;
        final String owner;
        final PlainHttp http;
        long cursor = -1;
        String bootstrapState;
        int n;

        VClient(String clientId, String owner, Options o) {
            this.clientId = clientId;
            this.owner = owner;
            this.http = new PlainHttp(o.sync(), SYNC_MEDIA_TYPE, 60_000,
                    o.authName() == null ? null : o.authName() + ": " + o.authValue());
        }

        @Override
        public void close() { http.close(); }
    }

    static final String SYNC_MEDIA_TYPE = "application/vnd.syncular.sync.v2";

    record Phase(int clients, long[] latencies, double wallSeconds, long failures, Map<String, LongAdder> reasons) { }

    /** Runs every client for {@code seconds}; returns the successful rounds' latencies (ns) and the failures. */
    private static Phase phase(Options o, List<VClient> vclients, int seconds)
            throws InterruptedException {
        int clients = vclients.size();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder failures = new LongAdder();
        Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
        long[][] perClient = new long[clients][];
        int[] counts = new int[clients];
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(clients);
        for (int c = 0; c < clients; c++) {
            int index = c;
            VClient v = vclients.get(c);
            Thread t = new Thread(() -> {
                long[] latencies = new long[1024];
                int k = 0;
                try {
                    start.await();
                    while (!stop.get()) {
                        long elapsed;
                        try {
                            elapsed = round(o, v);
                        } catch (Exception e) {
                            failures.increment();
                            String reason = e instanceof RoundFailure ? e.getMessage() : e.toString();
                            reasons.computeIfAbsent(reason, r -> new LongAdder()).increment();
                            Thread.sleep(10); // a failing server answers fast; do not spin on it
                            continue;
                        }
                        if (k == latencies.length) latencies = Arrays.copyOf(latencies, k * 2);
                        latencies[k++] = elapsed;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    synchronized (perClient) {
                        perClient[index] = latencies;
                        counts[index] = k;
                    }
                    done.countDown();
                }
            }, "bench-client-" + c);
            t.setDaemon(true);
            t.start();
        }
        long began = System.nanoTime();
        start.countDown();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        done.await();
        double wall = (System.nanoTime() - began) / 1e9;
        synchronized (perClient) {
            int total = Arrays.stream(counts).sum();
            long[] all = new long[total];
            int at = 0;
            for (int c = 0; c < clients; c++) {
                System.arraycopy(perClient[c], 0, all, at, counts[c]);
                at += counts[c];
            }
            Arrays.sort(all);
            return new Phase(clients, all, wall, failures.sum(), reasons);
        }
    }

    /** A response that decoded but does not show the round done. */
    static final class RoundFailure extends Exception {
        RoundFailure(String message) {
            super(message, null, false, false);
        }
    }

    /** One push + pull round of {@code v}; returns its latency in ns, or throws why it failed. */
    private static long round(Options o, VClient v) throws Exception {
        Schema s = o.schema();
        int n = v.n++;
        String id = v.owner + "-row-" + (n % ROWS_PER_CLIENT);
        String commitId = v.owner + "-c" + n;
        List<RequestFrame> frames = List.of(new ReqHeader(v.clientId, 1),
                new PushCommit(commitId, List.of(PushCommit.Operation.upsert(s.table, id, null, s.row(id, v.owner, n)))),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS),
                new Subscription("s", s.table, Map.of(s.scopeVariable, List.of(v.owner)), null, v.cursor,
                        v.bootstrapState));
        byte[] body = RequestEncoder.encode(new RequestMessage(1, frames));
        long start = System.nanoTime();
        PlainHttp.Response r = v.http.post(body);
        long elapsed = System.nanoTime() - start;
        if (r.status() != 200) {
            String text = new String(r.body(), StandardCharsets.UTF_8);
            throw new RoundFailure("HTTP " + r.status() + ": " + (text.length() > 200 ? text.substring(0, 200) : text));
        }
        ResponseMessage m = ResponseDecoder.decode(r.body());
        boolean applied = false;
        int pushResults = 0;
        int subEnds = 0;
        SubEnd end = null;
        for (ResponseFrame f : m.frames()) {
            if (f instanceof ErrorFrame e) throw new RoundFailure("ERROR frame " + e.code() + ": " + e.message());
            if (f instanceof RespHeader h && h.requiredSchemaVersion() != null) {
                throw new RoundFailure("schema floor: requiredSchemaVersion " + h.requiredSchemaVersion());
            }
            if (f instanceof PushResult p) {
                pushResults++;
                applied = p.status() == PushResult.Status.APPLIED && p.clientCommitId().equals(commitId);
                if (!applied) throw new RoundFailure("push " + p.status() + " " + p.results());
            }
            if (f instanceof SubStart st && st.status() != SubStart.Status.ACTIVE) {
                throw new RoundFailure("subscription " + st.status() + " " + st.reasonCode());
            }
            if (f instanceof SubEnd e) {
                subEnds++;
                end = e;
            }
        }
        if (pushResults != 1 || !applied) throw new RoundFailure("expected one applied PUSH_RESULT, got " + pushResults);
        if (subEnds != 1) throw new RoundFailure("expected one SUB_END, got " + subEnds);
        if (end.nextCursor() < v.cursor) {
            throw new RoundFailure("cursor moved back: " + v.cursor + " -> " + end.nextCursor());
        }
        v.cursor = end.nextCursor();
        v.bootstrapState = end.bootstrapStateJson();
        return elapsed;
    }

    private static void printReasons(Phase p) {
        p.reasons().entrySet().stream()
                .sorted((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum())).limit(5)
                .forEach(e -> System.out.println("#   " + e.getValue().sum() + " x " + e.getKey()));
    }

    /** One output line. NaN = not measured (prints "-"). */
    record Row(int clients, double rounds, double perSecond, double p50, double p95, double p99, double max,
            double failures, double serverCpu, double dbCpu, double txPerRound, double stmtPerRound,
            double rtPerRound, double driverCpu) {

        static Row of(int clients, Phase p, Meters.Sample before, Meters.Sample after, Meters meters) {
            long[] all = p.latencies();
            int rounds = all.length;
            double wall = p.wallSeconds();
            return new Row(clients, rounds, rounds / wall, percentileMs(all, 0.50), percentileMs(all, 0.95),
                    percentileMs(all, 0.99), rounds == 0 ? 0 : all[rounds - 1] / 1e6, p.failures(),
                    cpuPercent(before.serverTicks(), after.serverTicks(), wall, meters.clockTicks),
                    cpuPercent(before.dbTicks(), after.dbTicks(), wall, meters.clockTicks),
                    perRound(before.transactions(), after.transactions(), rounds),
                    perRound(before.statements(), after.statements(), rounds),
                    perRound(before.roundTrips(), after.roundTrips(), rounds),
                    cpuPercent(before.driverTicks(), after.driverTicks(), wall, meters.clockTicks));
        }

        static Row median(List<Row> rows) {
            return new Row(rows.get(0).clients(), med(rows, Row::rounds), med(rows, Row::perSecond), med(rows, Row::p50),
                    med(rows, Row::p95), med(rows, Row::p99), med(rows, Row::max),
                    rows.stream().mapToDouble(Row::failures).sum(), med(rows, Row::serverCpu), med(rows, Row::dbCpu),
                    med(rows, Row::txPerRound), med(rows, Row::stmtPerRound), med(rows, Row::rtPerRound),
                    med(rows, Row::driverCpu));
        }

        String format(String run) {
            return String.format(Locale.ROOT,
                    "%-8d %10.0f %12.1f %9.2f %9.2f %9.2f %9.2f %8.0f %8s %8s %9s %10s %9s %8s  %s",
                    clients, rounds, perSecond, p50, p95, p99, max, failures, num(serverCpu, 1), num(dbCpu, 1),
                    num(txPerRound, 2), num(stmtPerRound, 2), num(rtPerRound, 2), num(driverCpu, 1), run);
        }

        private static double med(List<Row> rows, ToDoubleFunction<Row> f) {
            double[] v = rows.stream().mapToDouble(f).toArray();
            if (Arrays.stream(v).anyMatch(Double::isNaN)) return Double.NaN;
            Arrays.sort(v);
            return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        }

        private static String num(double v, int decimals) {
            return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
        }

        private static double cpuPercent(long before, long after, double wall, long hz) {
            return before < 0 || after < 0 ? Double.NaN : (after - before) * 100.0 / hz / wall;
        }

        private static double perRound(long before, long after, int rounds) {
            return before < 0 || after < 0 || rounds == 0 ? Double.NaN : (after - before) / (double) rounds;
        }
    }

    /** The optional counters read around each measured window; -1 = not measured. */
    static final class Meters {
        /** {@code driverTicks}: this driver's own CPU, which shares the machine with the server and the database. */
        record Sample(long serverTicks, long dbTicks, long transactions, long statements, long roundTrips,
                long driverTicks) { }

        private final Options o;
        private final HttpClient http;
        final long clockTicks;
        private Connection pg;
        private boolean statements;

        Meters(Options o, HttpClient http) throws SQLException {
            this.o = o;
            this.http = http;
            this.clockTicks = clockTicks();
            if (o.pg() != null) {
                pg = DriverManager.getConnection(o.pg());
                pg.setAutoCommit(true);
                try (Statement st = pg.createStatement();
                        ResultSet rs = st.executeQuery("/* " + MARK + " */ SELECT count(*) FROM pg_extension "
                                + "WHERE extname = 'pg_stat_statements'")) {
                    rs.next();
                    statements = rs.getInt(1) > 0;
                }
                if (statements) {
                    try (Statement st = pg.createStatement();
                            ResultSet rs = st.executeQuery("/* " + MARK + " */ SELECT sum(calls) FROM pg_stat_statements")) {
                        rs.next(); // readable (the library is preloaded), or this throws
                    } catch (SQLException e) {
                        statements = false;
                        System.out.println("# pg_stat_statements is installed but not readable: " + e.getMessage());
                    }
                }
            }
        }

        String describe() {
            return "server-pid=" + (o.serverPid() == null ? "-" : o.serverPid()) + " db-pid="
                    + (o.dbPid() == null ? "-" : o.dbPid()) + " pg=" + (o.pg() == null ? "-" : o.pg())
                    + (o.pg() == null ? "" : statements ? " (pg_stat_statements: yes)" : " (pg_stat_statements: no)")
                    + " roundtrip-counter=" + (o.roundTripCounter() == null ? "-" : o.roundTripCounter())
                    + " CLK_TCK=" + clockTicks;
        }

        /**
         * Reads every counter. With {@code --pg} it first waits 1.5 s with no load running: backends publish their
         * transaction counts to pg_stat_database at most once a second, so without the pause a window would lose
         * its last second and gain the one before it.
         */
        Sample sample(boolean settle) throws Exception {
            if (pg != null && settle) Thread.sleep(1500);
            long tx = -1;
            long stmts = -1;
            if (pg != null) {
                String sql = "/* " + MARK + " */ SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database "
                        + "WHERE datname = current_database())"
                        + (statements ? ", (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = "
                                + "(SELECT oid FROM pg_database WHERE datname = current_database()) "
                                + "AND query NOT LIKE '%" + MARK + "%')" : "");
                try (Statement st = pg.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                    rs.next();
                    tx = rs.getLong(1);
                    if (statements) stmts = rs.getLong(2);
                }
                // pg_stat_clear_snapshot is implicit: each autocommit query is its own transaction
            }
            long rt = o.roundTripCounter() == null ? -1 : roundTrips();
            return new Sample(o.serverPid() == null ? -1 : treeTicks(o.serverPid()),
                    o.dbPid() == null ? -1 : treeTicks(o.dbPid()), tx, stmts, rt, ticks(ProcessHandle.current().pid()));
        }

        private long roundTrips() throws IOException, InterruptedException {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + o.roundTripCounter() + "/"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            for (String line : r.body().split("\n")) {
                String[] kv = line.trim().split("\\s+");
                if (kv.length == 2 && kv[0].equals("roundtrips")) return Long.parseLong(kv[1]);
            }
            throw new IOException("no 'roundtrips N' line from the round-trip counter: " + r.body());
        }

        /** utime + stime of {@code pid} and its live descendants, in clock ticks; -1 if the process is gone. */
        static long treeTicks(long pid) {
            long own = ticks(pid);
            if (own < 0) return -1;
            long sum = own;
            for (ProcessHandle d : ProcessHandle.of(pid).map(h -> h.descendants().toList()).orElse(List.of())) {
                sum += Math.max(0, ticks(d.pid()));
            }
            return sum;
        }

        private static long ticks(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"), StandardCharsets.US_ASCII);
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 (utime) and 15 (stime)
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }

        private static long clockTicks() {
            try {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                p.waitFor();
                return Long.parseLong(out);
            } catch (IOException | InterruptedException | NumberFormatException e) {
                return 100;
            }
        }

        void close() throws SQLException {
            if (pg != null) pg.close();
        }
    }

    private static String rate(long before, long after, double seconds, double scale) {
        return before < 0 || after < 0 ? "-" : String.format(Locale.ROOT, "%.1f", (after - before) * scale / seconds);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}

package syncular.jakarta.storage.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;

/**
 * Storage benchmark driver (not a test; never run by surefire). It lives with the tests because it starts the
 * test-scoped embedded PostgreSQL. Prints Markdown rows for docs/benchmarks.md "## Storage".
 *
 * <pre>mvn -o -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=syncular.jakarta.storage.bench.StorageBench [-Dbench.seconds=5]</pre>
 *
 * Push commit = the storage work of one single-row push, in its own transaction, in three forms. Long: partition
 * lock + savepoint, serve-gate re-read, idempotency re-check, getRow, upsertRow, appendCommit, putPushResult, commit
 * (8 round trips, 7 under the lock). Short: lockForPush (lock, savepoint, gate, re-check), getRow, upsertRow,
 * appendCommit with the result, commit (5 round trips, 4 under the lock). Batched: lockForPush with the row
 * prefetch, applyCommit (write, append, result), commit (3 round trips, 2 under the lock). The isolation level rides
 * in front of the first statement in all three.
 */
public final class StorageBench {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);

    private StorageBench() { }

    public static void main(String[] args) throws Exception {
        int seconds = Integer.getInteger("bench.seconds", 5);
        String pgbench = System.getProperty("bench.pgbench", "/usr/lib/postgresql/15/bin/pgbench");
        System.out.printf(Locale.ROOT, "cores=%d load=%s%n", Runtime.getRuntime().availableProcessors(), load());
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                    System::currentTimeMillis);
            storage.ensureSchema(SCHEMA, List.of());
            System.out.println("| push form | writers | partitions | commits | seconds | commits/s |");
            System.out.println("|---|---|---|---|---|---|");
            for (Form form : Form.values()) {
                for (int partitions : new int[] {1, 32}) {
                    for (int writers : new int[] {1, 8, 32}) {
                        pushes(storage, writers, partitions, 1, form);   // warm-up: JIT, server prepares
                        pushes(storage, writers, partitions, seconds, form);
                    }
                }
            }
            // interleaved A/B on the contended case, so a load change on a shared machine hits both forms alike
            System.out.println();
            System.out.println("Interleaved, 8 writers on 1 partition, " + seconds + " s each:");
            System.out.println("| push form | writers | partitions | commits | seconds | commits/s |");
            System.out.println("|---|---|---|---|---|---|");
            for (int round = 0; round < 3; round++) {
                for (Form form : Form.values()) pushes(storage, 8, 1, seconds, form);
            }
            snapshot(storage, db);
            pgbench(pgbench, db.url(), seconds);
        }
        System.exit(0);
    }

    private static String load() {
        try {
            return new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/loadavg")),
                    StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return "?";
        }
    }

    /** The three ways the storage contract lets a push spend round trips under the partition lock. */
    enum Form {
        LONG("long (7 under lock)"), SHORT("short (4 under lock)"), BATCHED("batched (2 under lock)");

        final String label;

        Form(String label) { this.label = label; }
    }

    private static void pushes(PostgresServerStorage storage, int writers, int partitions, int seconds, Form form)
            throws InterruptedException {
        String run = Long.toString(System.nanoTime(), 36);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong commits = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            Thread t = new Thread(() -> {
                String p = "bench-" + run + "-" + (writer % partitions);
                try {
                    start.await();
                    for (int i = 0; !stop.get(); i++) {
                        String id = "w" + writer + "-" + i;
                        StoredRow row = TestSchemas.taskRow(SCHEMA, id, "p" + (i % 10), 1);
                        if (form == Form.BATCHED) {
                            storage.inTransaction(p, tx -> {
                                tx.lockForPush(1, List.of(new PushKey("client-" + writer, id)), List.of(new RowKey("tasks", id)), false);
                                return tx.applyCommit(List.of(new RowWrite.Upsert("tasks", row, 0)),
                                        TestSchemas.upsertCommit(id, row), StoredPushResult.applied(0, List.of()));
                            });
                        } else if (form == Form.SHORT) {
                            storage.inTransaction(p, tx -> {
                                tx.lockForPush(1, List.of(new PushKey("client-" + writer, id)), List.of(), false);
                                tx.getRow("tasks", id);
                                tx.upsertRow("tasks", row, 0);
                                return tx.appendCommit(TestSchemas.upsertCommit(id, row),
                                        StoredPushResult.applied(0, List.of()));
                            });
                        } else {
                            storage.inTransaction(p, tx -> {
                                tx.lockPartitionForPush();
                                tx.readServeGate(1);
                                tx.getPushResult("client-" + writer, id);
                                tx.getRow("tasks", id);
                                tx.upsertRow("tasks", row, 0);
                                long seq = tx.appendCommit(TestSchemas.upsertCommit(id, row));
                                tx.putPushResult("client-" + writer, id, StoredPushResult.applied(seq, List.of()));
                                return seq;
                            });
                        }
                        commits.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            t.start();
            threads.add(t);
        }
        long t0 = System.nanoTime();
        start.countDown();
        Thread.sleep(seconds * 1000L);   // the measured interval itself
        stop.set(true);
        for (Thread t : threads) t.join();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        if (failure.get() != null) throw new IllegalStateException("a writer failed", failure.get());
        if (seconds > 1) {
            System.out.printf(Locale.ROOT, "| %s | %d | %d | %d | %.1f | %.0f |%n", form.label, writers, partitions,
                    commits.get(), elapsed, commits.get() / elapsed);
        }
    }

    /** 100k rows over 10 projects; reads one project's 10k rows in keyset pages. */
    private static void snapshot(PostgresServerStorage storage, EmbeddedPostgresSupport.Pool db) throws SQLException {
        String p = "snapshot";
        int rows = 100_000;
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement row = c.prepareStatement("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, false, 1, "
                    + "?::jsonb, ?, NULL)");
                 PreparedStatement scope = c.prepareStatement("INSERT INTO sync_row_scopes VALUES (?, 'tasks', "
                         + "'project_id', ?, ?)")) {
                for (int i = 0; i < rows; i++) {
                    String id = String.format("r%06d", i);
                    String project = "p" + (i % 10);
                    String title = "a task title of a realistic length, number " + i;
                    row.setString(1, p);
                    row.setString(2, id);
                    row.setString(3, id);
                    row.setString(4, project);
                    row.setString(5, title);
                    row.setString(6, "{\"project_id\":\"" + project + "\"}");
                    row.setBytes(7, TestSchemas.taskPayload(SCHEMA, id, project, title, false));
                    row.addBatch();
                    scope.setString(1, p);
                    scope.setString(2, project);
                    scope.setString(3, id);
                    scope.addBatch();
                    if (i % 5000 == 4999) {
                        row.executeBatch();
                        scope.executeBatch();
                    }
                }
            }
            c.commit();
            try (var s = c.createStatement()) {
                s.execute("ANALYZE");
            }
            c.commit();
        }
        System.out.println();
        System.out.println("| snapshot page size | rows read | seconds | rows/s |");
        System.out.println("|---|---|---|---|");
        for (int pageSize : new int[] {1000, 1000, 5000}) {   // the first 1000 run is warm-up
            long t0 = System.nanoTime();
            long total = 0;
            int passes = 0;
            while (System.nanoTime() - t0 < 3e9) {
                String after = null;
                while (true) {
                    List<StoredRow> page = Reads.scan(storage, p, new RowScanQuery("tasks", ScopeFilter.of("project_id",
                            "p3"), after, pageSize));
                    if (page.isEmpty()) break;
                    total += page.size();
                    after = page.get(page.size() - 1).rowId();
                }
                passes++;
            }
            double elapsed = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "| %d | %d (%d passes) | %.1f | %.0f |%n", pageSize, total, passes,
                    elapsed, total / elapsed);
        }
    }

    private static void pgbench(String pgbench, String jdbcUrl, int seconds) throws IOException, InterruptedException {
        if (!java.nio.file.Files.isExecutable(java.nio.file.Path.of(pgbench))) {
            System.out.println("pgbench not found at " + pgbench);
            return;
        }
        java.net.URI uri = java.net.URI.create(jdbcUrl.substring("jdbc:".length()));
        String db = uri.getPath().substring(1);
        List<String> base = List.of(pgbench, "-h", uri.getHost(), "-p", Integer.toString(uri.getPort()), "-U",
                "postgres");
        run(concat(base, List.of("-i", "-q", "-s", "10", db)));
        for (int clients : new int[] {1, 8, 32}) {
            System.out.println("pgbench TPC-B, " + clients + " clients:");
            run(concat(base, List.of("-M", "prepared", "-c", Integer.toString(clients), "-j", "2", "-T",
                    Integer.toString(seconds), db)));
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static void run(List<String> cmd) throws IOException, InterruptedException {
        System.out.println("$ " + String.join(" ", cmd));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        for (String line : out.split("\n")) {
            if (line.startsWith("tps") || line.startsWith("latency average") || line.startsWith("number of clients")
                    || line.startsWith("scaling") || line.contains("error")) {
                System.out.println("    " + line);
            }
        }
    }
}

package syncular.jakarta.migration;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.sync.PushProcessor;
import syncular.jakarta.sync.Validation;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;

/**
 * Backfill benchmark driver (issue 7; not a test, never run by surefire): throughput of the runner over
 * {@code bench.rows} source rows in one partition, alone and under concurrent single-row pushes to the same
 * partition (the backfill's push takes the same partition lock), and the push p95 with and without the backfill.
 * Embedded PostgreSQL (fsync off), JDBC transactions: the runner's SQL and push path, not the container's.
 *
 * <pre>mvn -o -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=syncular.jakarta.migration.BackfillBench -Dbench.rows=1000000 -Dbench.batch=500 \
 *     [-Dbench.only=alone|traffic] [-Dbench.writers=4] [-Dbench.max-wait=2] [-Dbench.max-p95=0]
 *     [-Dbench.seconds=N] [-Dbench.before-s=20]</pre>
 * With writers, they push alone for {@code bench.before-s} seconds first (the p95 the backfill's is compared to),
 * then the backfill starts while they go on.
 */
public final class BackfillBench {
    private BackfillBench() { }

    public static void main(String[] args) throws Exception {
        int rows = Integer.getInteger("bench.rows", 1_000_000);
        int batch = Integer.getInteger("bench.batch", 500);
        int writers = Integer.getInteger("bench.writers", 4);
        System.out.printf(Locale.ROOT, "cores=%d rows=%d batch=%d writers=%d%n",
                Runtime.getRuntime().availableProcessors(), rows, batch, writers);
        System.out.println("| run | source rows | seconds | rows/s | batches | pushes | push p50 ms | push p95 ms |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        String only = System.getProperty("bench.only", "all");   // alone | traffic | all
        if (!only.equals("traffic")) run(rows, batch, 0);
        if (!only.equals("alone")) run(rows, batch, writers);
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                    System::currentTimeMillis);
            CompiledSchema v2 = schemaV2();
            storage.ensureSchema(v2, List.of());
            List<Long> lat = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = startWriters(storage, v2, "p", writers, stop, new AtomicReference<>(lat),
                    nanos -> { });
            Thread.sleep(20_000);
            stop.set(true);
            for (Thread t : threads) t.join();
            print("pushes alone (no backfill)", 0, 20_000, 0, lat);
        }
    }

    static CompiledSchema schemaV2() {
        return TestSchemas.tasksWith(2, "id", """
                {"name": "id", "type": "string", "nullable": false},
                {"name": "project_id", "type": "string", "nullable": false},
                {"name": "title", "type": "string", "nullable": false},
                {"name": "done", "type": "boolean", "nullable": false}""", """
                {"name": "task_titles", "primaryKey": "id",
                 "columns": [{"name": "id", "type": "string", "nullable": false},
                             {"name": "project_id", "type": "string", "nullable": false},
                             {"name": "title", "type": "string", "nullable": false}],
                 "scopes": [{"pattern": "project:{project_id}"}]}""");
    }

    static void run(int rows, int batch, int writers) throws Exception {
        CompiledSchema v1 = TestSchemas.tasks(1);
        CompiledSchema v2 = schemaV2();
        String p = "bench";
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage old = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                    System::currentTimeMillis);
            old.ensureSchema(v1, List.of());
            for (int c = 0; c < rows / 1000; c++) {
                List<RowWrite> writes = new ArrayList<>(1000);
                List<StoredChange> changes = new ArrayList<>(1000);
                for (int i = 0; i < 1000; i++) {
                    String id = String.format(Locale.ROOT, "t%08d", c * 1000 + i);
                    StoredRow row = TestSchemas.taskRow(v1, id, "p1", 1);
                    writes.add(new RowWrite.Upsert("tasks", row, i));
                    changes.add(StoredChange.upsert("tasks", id, 1, row.scopes(), row.payload()));
                }
                int commit = c;
                old.inTransaction(p, tx -> {
                    tx.lockForPush(1, List.of(new PushKey("seed", "seed-" + commit)), List.of(), false);
                    return tx.applyCommit(writes, new NewCommit("seed", "seed-" + commit, "seed", 0, changes),
                            new StoredPushResult(StoredPushResult.Status.APPLIED, 0L, 0L, "x",
                                    List.of(new OperationResult.Applied(0))));
                });
            }
            PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                    System::currentTimeMillis);
            Declarations declarations = new Declarations(List.<syncular.jakarta.host.BackfillDefinition>of(
                    new ColumnCopyProjection("titles_v2", 2, "tasks", "task_titles")), 2, storage);
            storage.ensureSchema(v2, declarations.current());
            BackfillRunner runner = new BackfillRunner(storage, syncular.jakarta.storage.UnitTransactions.of(storage),
                    () -> v2,
                    declarations, System::currentTimeMillis, batch, Long.getLong("bench.max-wait", 2),
                    Long.getLong("bench.max-p95", 0), syncular.jakarta.events.ServerEvents.NONE);
            List<Long> lat = Collections.synchronizedList(new ArrayList<>());
            List<Long> before = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<List<Long>> sink = new AtomicReference<>(before);
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = startWriters(storage, v2, p, writers, stop, sink, runner::pushServed);
            if (writers > 0) {
                // the writers' p95 before the backfill, on this database, warm (issue 21 compares against it)
                Thread.sleep(Long.getLong("bench.before-s", 20) * 1000);
                sink.set(lat);
                print(writers + " push writers before the backfill, same database", 0,
                        Long.getLong("bench.before-s", 20) * 1000, 0, before);
            }
            // the writers push new source rows, so activation answers stale until they stop: they run for the
            // whole first (full) pass, which is what the throughput and the p95 are measured over
            long t0 = System.nanoTime();
            // -Dbench.seconds=N: measure the first N seconds of the pass only (rows/s over them), a quick comparison
            long limitNanos = Long.getLong("bench.seconds", 0) * 1_000_000_000L;
            long[] lastReport = {t0, 0, 0, 0};   // at, pass rows, batches, latencies seen
            // the first pass as last seen (looked at every 200 ms during the drain): rows, nanos since t0, batches,
            // and 1 once it ended (exhausted, or a later pass seen: the activation found it stale and went on)
            long[] first = {0, 0, 0, 0};
            long[] lastLook = {t0};
            java.util.function.BooleanSupplier keepGoing = () -> {
                long now = System.nanoTime();
                if (now - lastLook[0] >= 200_000_000L) {
                    lastLook[0] = now;
                    BackfillPass pass = storage.backfillProgress().get(0).pass().orElse(null);
                    if (pass != null && pass.pass() == 1) {
                        first[0] = pass.passRows();
                        first[1] = now - t0;
                        first[2] = pass.batches();
                        if (pass.exhausted()) first[3] = 1;
                    } else if (pass != null) {
                        first[3] = 1;
                    }
                }
                return first[3] == 0 && now - lastReport[0] < 10_000_000_000L
                        && (limitNanos == 0 || now - t0 < limitNanos);
            };
            boolean measured = false;
            while (!storage.pendingCheckpoints(2, declarations.names()).isEmpty()) {
                runner.drain(0, measured ? () -> true : keepGoing);
                if (measured) continue;
                long now = System.nanoTime();
                if (now - lastReport[0] >= 10_000_000_000L && first[3] == 0) {
                    // a trace every 10 s: rows/s, mean batch and the pushes' p95 of the interval
                    List<Long> window;
                    synchronized (lat) { window = new ArrayList<>(lat.subList((int) lastReport[3], lat.size())); }
                    Collections.sort(window);
                    System.out.printf(Locale.ROOT,
                            "  t=%.0fs rows=%d (%.0f rows/s, mean batch %.0f) pushes %d p95 %s ms%n", (now - t0) / 1e9,
                            first[0], (first[0] - lastReport[1]) * 1e9 / (now - lastReport[0]),
                            (first[0] - lastReport[1]) / (double) Math.max(1, first[2] - lastReport[2]),
                            window.size(), window.isEmpty() ? "–" : String.format(Locale.ROOT, "%.2f",
                                    window.get((int) (window.size() * 0.95)) / 1e6));
                    lastReport[0] = now;
                    lastReport[1] = first[0];
                    lastReport[2] = first[2];
                    lastReport[3] += window.size();
                }
                if (first[3] == 1 || (limitNanos > 0 && now - t0 >= limitNanos)) {
                    measured = true;
                    stop.set(true);
                    if (first[3] == 0) break;   // the limit: the pass is not followed to its end
                }
            }
            long fullPassMs = first[1] / 1_000_000;
            long fullPassBatches = first[2];
            int passRows = (int) first[0];
            long totalMs = (System.nanoTime() - t0) / 1_000_000;
            for (Thread t : threads) t.join();
            print(writers == 0 ? "backfill alone (full pass)" : "backfill + " + writers + " push writers (full pass)",
                    passRows, fullPassMs, fullPassBatches, lat);
            System.out.printf(Locale.ROOT, "| … until activated | | %.1f | | | | | |%n", totalMs / 1000.0);
        }
    }

    /**
     * Single-row pushes of source rows (new ids) through one push path, same partition, until stopped: {@code n}
     * closed-loop clients of one node.
     */
    static List<Thread> startWriters(PostgresServerStorage storage, CompiledSchema schema, String p, int n,
                                     AtomicBoolean stop, AtomicReference<List<Long>> latencies,
                                     java.util.function.LongConsumer served) {
        List<Thread> threads = new ArrayList<>();
        AtomicLong ids = new AtomicLong();
        // one push path for all writers, as a node has one for all its requests: concurrent pushes to the partition
        // are applied by its group commit, one lock acquisition per group (until 2026-12-05 each writer had its own
        // processor, so every push took the partition lock alone, which no node does)
        PushProcessor push = new PushProcessor(storage, System::currentTimeMillis, Validation.NONE, 1000);
        for (int w = 0; w < n; w++) {
            int writer = w;
            Thread t = new Thread(() -> {
                PushProcessor.RequestScope scope = new PushProcessor.RequestScope(new Identity("u", p),
                        "writer-" + writer, 2);
                java.util.Map<String, List<String>> allowed = java.util.Map.of("project_id", List.of("*"));
                while (!stop.get()) {
                    String id = "w" + ids.incrementAndGet();
                    long s = System.nanoTime();
                    PushProcessor.Outcome o = push.push(new PushProcessor.Batch(scope, schema, allowed,
                            List.of(new PushCommit("c-" + id, List.of(PushCommit.Operation.upsert("tasks", id, null,
                                    TestSchemas.taskPayload(schema, id, "p1", "title", false))))), g -> { }))
                            .outcomes().get(0);
                    if (o.result().status() != PushResult.Status.APPLIED) throw new AssertionError(o.result());
                    long took = System.nanoTime() - s;
                    latencies.get().add(took);
                    served.accept(took);   // what a node's request events feed its runner's pacer
                }
            });
            t.start();
            threads.add(t);
        }
        return threads;
    }

    static void print(String run, int rows, long ms, long batches, List<Long> lat) {
        List<Long> sorted = new ArrayList<>(lat);
        Collections.sort(sorted);
        String p50 = sorted.isEmpty() ? "–" : String.format(Locale.ROOT, "%.2f", sorted.get(sorted.size() / 2) / 1e6);
        String p95 = sorted.isEmpty() ? "–" : String.format(Locale.ROOT, "%.2f",
                sorted.get((int) (sorted.size() * 0.95)) / 1e6);
        System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %s | %d | %d | %s | %s |%n", run, rows, ms / 1000.0,
                rows == 0 ? "–" : String.format(Locale.ROOT, "%.0f", rows * 1000.0 / ms), batches, sorted.size(), p50, p95);
    }
}

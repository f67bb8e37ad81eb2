package syncular.jakarta.sync.bench;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Bootstrap storm (issue 15; NOT a test), target-neutral like {@link SyncLoadDriver} and shaped like the upstream
 * load suite's {@code bootstrap-storm}: per run, {@code --rows} rows are seeded into a fresh project, then
 * {@code --vus} clients bootstrap that same project over and over for {@code --seconds}, each bootstrap as a fresh
 * client from scratch ({@link ImageBootstrapBench#bootstrap}: every page decoded, every segment downloaded and read,
 * every row counted and its id checked unique). {@code --lane=image} (the default, as upstream's storm: accept bits
 * 0–2, the table as one SQLite image) or {@code --lane=rows} (bits 0–1: pages and rows segments). Nothing is written
 * during the storm, so every bootstrap of a run has the same pin: a server that builds once and reuses serves one
 * image (the "segments" column counts the distinct image ids the clients got).
 *
 * <p>Options: {@code --url=}, {@code --rows=20000}, {@code --vus=20}, {@code --seconds=20}, {@code --runs=2},
 * {@code --lane=image|rows}.
 */
public final class BootstrapStormBench {
    private BootstrapStormBench() { }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchSupport.options(args);
        URI base = BenchSupport.baseUrl(o);
        int rows = BenchSupport.intOption(o, "rows", 20000);
        int vus = BenchSupport.intOption(o, "vus", 20);
        int seconds = BenchSupport.intOption(o, "seconds", 20);
        int runs = BenchSupport.intOption(o, "runs", 2);
        String lane = o.getOrDefault("lane", "image");
        if (!lane.equals("image") && !lane.equals("rows")) throw new IllegalArgumentException("--lane=image|rows");
        boolean image = lane.equals("image");
        System.out.printf("# BootstrapStormBench %s rows=%d vus=%d seconds=%d lane=%s%n", base, rows, vus, seconds,
                lane);
        System.out.printf("%-4s %10s %11s %9s %9s %9s %12s %9s %9s%n", "run", "bootstraps", "per second", "p50 ms",
                "p95 ms", "p99 ms", "rows/s", "segments", "failures");
        int failedRuns = 0;
        for (int run = 1; run <= runs; run++) {
            String project = "storm-" + run + "-" + Long.toHexString(System.nanoTime());
            ImageBootstrapBench.seed(base, project, rows);
            List<Long> nanos = Collections.synchronizedList(new ArrayList<>());
            Set<String> images = ConcurrentHashMap.newKeySet();
            AtomicInteger failures = new AtomicInteger();
            AtomicReference<Throwable> firstFailure = new AtomicReference<>();
            AtomicInteger serial = new AtomicInteger();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long start = System.nanoTime();
            List<Thread> clients = new ArrayList<>();
            for (int v = 0; v < vus; v++) {
                int vu = v;
                Thread t = new Thread(() -> {
                    while (System.nanoTime() < end) {
                        String clientId = project + "-boot-" + vu + "-" + serial.incrementAndGet();
                        try {
                            ImageBootstrapBench.Result r = ImageBootstrapBench.bootstrap(base, project, image,
                                    clientId);
                            if (r.rows() != rows) {
                                throw new IllegalStateException("bootstrap delivered " + r.rows() + " rows");
                            }
                            nanos.add(r.nanos());
                            if (r.segment() != null) images.add(r.segment());
                        } catch (Exception | AssertionError e) {
                            failures.incrementAndGet();
                            firstFailure.compareAndSet(null, e);
                        }
                    }
                }, "storm-vu-" + v);
                t.start();
                clients.add(t);
            }
            for (Thread t : clients) t.join();
            double wall = (System.nanoTime() - start) / 1e9;
            long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf("%-4d %10d %11.1f %9.1f %9.1f %9.1f %12s %9s %9d%n", run, sorted.length,
                    sorted.length / wall, BenchSupport.percentileMs(sorted, 0.50),
                    BenchSupport.percentileMs(sorted, 0.95), BenchSupport.percentileMs(sorted, 0.99),
                    String.format("%,d", Math.round((double) sorted.length * rows / wall)),
                    image ? String.valueOf(images.size()) : "-", failures.get());
            if (firstFailure.get() != null) {
                failedRuns++;
                System.err.println("run " + run + ": first failure");
                firstFailure.get().printStackTrace();
            }
        }
        if (failedRuns > 0) System.exit(2);
    }
}

package syncular.jakarta.sync.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * An embedded PostgreSQL for a benchmark run (a tool, NOT a test): the zonky PostgreSQL 17 the tests use, on a given
 * port with a given (fresh) data directory, {@code fsync=off} (zonky's defaults add {@code synchronous_commit=off},
 * {@code max_connections=300}, UTC), and {@code shared_preload_libraries=pg_stat_statements} with the extension
 * created in database {@code postgres} — if the binaries cannot load it, it starts without and says so. Prints
 * {@code BENCH_PG_READY <jdbc url>}, then {@code BENCH_PG_URL <postgres:// url>} and
 * {@code BENCH_PG_STATEMENTS yes|no}, and stays up until killed (SIGTERM stops PostgreSQL; the data directory is
 * deleted then).
 *
 * <pre>java -cp … syncular.jakarta.sync.bench.BenchPostgres --port=55432 --data-dir=target/bench/pg-1
 *     [--work-dir=target/embedded-pg]</pre>
 */
public final class BenchPostgres {
    private BenchPostgres() { }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) throw new IllegalArgumentException("expected --key=value, got " + a);
            o.put(a.substring(2, eq), a.substring(eq + 1));
        }
        int port = BenchSupport.intOption(o, "port", 55432);
        Path data = Path.of(o.getOrDefault("data-dir", "target/bench/pg")).toAbsolutePath();
        Path work = Path.of(o.getOrDefault("work-dir",
                System.getProperty("ot.epg.working-dir", "target/embedded-pg"))).toAbsolutePath();
        try (var entries = Files.exists(data) ? Files.list(data) : java.util.stream.Stream.<Path>empty()) {
            if (entries.findAny().isPresent()) throw new IllegalStateException(data + " is not empty: use a fresh one");
        }
        Files.createDirectories(data);
        Files.createDirectories(work);

        EmbeddedPostgres pg;
        boolean statements = true;
        try {
            pg = start(port, data, work, true);
        } catch (IOException e) {
            System.out.println("# PostgreSQL did not start with pg_stat_statements preloaded (" + e.getMessage()
                    + "); starting without it: no statement counts");
            deleteContents(data);
            pg = start(port, data, work, false);
            statements = false;
        }
        if (statements) {
            try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
                st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            } catch (SQLException e) {
                System.out.println("# CREATE EXTENSION pg_stat_statements failed (" + e.getMessage()
                        + "): no statement counts");
                statements = false;
            }
        }
        EmbeddedPostgres running = pg;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                running.close();
            } catch (IOException e) {
                System.err.println("PostgreSQL did not stop cleanly: " + e.getMessage());
            }
            stopped.countDown();
        }, "bench-pg-stop"));
        System.out.println("BENCH_PG_READY jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres");
        System.out.println("BENCH_PG_URL postgres://postgres:postgres@127.0.0.1:" + port + "/postgres");
        System.out.println("BENCH_PG_STATEMENTS " + (statements ? "yes" : "no"));
        System.out.println("BENCH_PG_DATA " + data);
        System.out.flush();
        stopped.await();
    }

    private static EmbeddedPostgres start(int port, Path data, Path work, boolean statements) throws IOException {
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(data.toFile())
                .setCleanDataDirectory(true)
                .setRegisterShutdownHook(false)
                .setOverrideWorkingDirectory(work.toFile())
                .setServerConfig("fsync", "off");
        if (statements) {
            b.setServerConfig("shared_preload_libraries", "pg_stat_statements")
                    .setServerConfig("pg_stat_statements.track", "top")
                    .setServerConfig("pg_stat_statements.track_utility", "on")
                    .setServerConfig("pg_stat_statements.track_planning", "on");
        }
        return b.start();
    }

    private static void deleteContents(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(dir)) Files.deleteIfExists(p);
            }
        }
    }
}

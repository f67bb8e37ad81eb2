package syncular.jakarta.dev;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code mvn -Prun}: the server on an embedded default with nothing installed. Starts PostgreSQL (zonky; data in
 * {@code syncular.data-dir}, default {@code ./.syncular-dev/}, kept between runs) and Payara Micro with the WAR,
 * prints the URL once {@code /health/ready} answers 200, and stops both on Ctrl-C or SIGTERM. Every
 * {@code -Dsyncular.*} given to Maven is handed to the server as a system property (MicroProfile Config reads it).
 * With {@code -Dsyncular.conformance-host=true} the data directory is a throw-away one: conformance resets wipe it.
 * With {@code -Dsyncular.dev.db-url=jdbc:postgresql://…} no embedded PostgreSQL is started and the server uses that
 * database (user and password from {@code syncular.db.user}/{@code syncular.db.password}, default postgres).
 */
public final class DevServer {
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(5);
    /**
     * The server JVM's options (issue 14), as a production guide would set them: a fixed heap (no resizing under
     * load, and a cap well under the machine's memory), G1, a heap dump and an exit on OutOfMemoryError (a
     * supervisor restarts a process it can trust; a half-dead one keeps answering). Override with
     * {@code -Dsyncular.dev.jvm-options="…"}.
     */
    static final String DEFAULT_JVM_OPTIONS = "-Xms1g -Xmx1g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError "
            + "-XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=target/run";
    /**
     * asadmin commands Payara Micro runs after boot, before the WAR deploys. The plain-text listener answers HTTP/1.1
     * only: with HTTP/2 on, Grizzly looks at every request for an h2c upgrade (1.5 % of the server's CPU samples in
     * the push-pull benchmark, docs/benchmarks.md), and clients reach a production server over TLS or a proxy that
     * speaks HTTP/1.1 to it.
     */
    static final List<String> POST_BOOT_COMMANDS = List.of(
            "set configs.config.server-config.network-config.protocols.protocol.http-listener.http.http2-enabled=false");

    private EmbeddedPostgres pg;
    private Process micro;

    public static void main(String[] args) throws Exception {
        new DevServer().run();
    }

    private void run() throws Exception {
        int port = Integer.parseInt(System.getProperty("syncular.port", "8080"));
        boolean conformance = Boolean.parseBoolean(System.getProperty("syncular.conformance-host", "false"));
        Path work = Path.of(required("syncular.run.work"));
        Path dataDir = conformance
                ? Files.createTempDirectory("syncular-conformance-")
                : Path.of(System.getProperty("syncular.data-dir", ".syncular-dev")).toAbsolutePath();
        String externalDb = System.getProperty("syncular.dev.db-url", "");

        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(conformance ? dataDir : null), "syncular-dev-stop"));

        String jdbcUrl;
        if (!externalDb.isBlank()) {
            // opt-in (benchmarks): a database someone else runs, e.g. behind a round-trip counting proxy
            jdbcUrl = externalDb;
            say("PostgreSQL: the external %s (syncular.dev.db-url); no embedded one started", jdbcUrl);
        } else {
            Path pgData = dataDir.resolve("postgres");
            Files.createDirectories(pgData);
            recoverStalePostmaster(pgData);
            long t0 = System.nanoTime();
            pg = EmbeddedPostgres.builder()
                    .setDataDirectory(pgData.toFile())
                    .setCleanDataDirectory(false)
                    .setPort(Integer.getInteger("syncular.dev.pg-port", 0))
                    .setOverrideWorkingDirectory(Path.of(System.getProperty("ot.epg.working-dir",
                            work.resolve("embedded-pg").toString())).toFile())
                    .start();
            jdbcUrl = "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres";
            say("PostgreSQL %s on port %d (data: %s) in %d ms", "17", pg.getPort(), pgData,
                    (System.nanoTime() - t0) / 1_000_000);
        }

        micro = startMicro(work, port, jdbcUrl);
        URI ready = URI.create("http://localhost:" + port + "/syncular/health/ready");
        if (awaitReady(ready)) {
            say("Syncular is ready: http://localhost:%d/syncular%s", port, conformance ? "  (CONFORMANCE-HOST mode)" : "");
            say("  try: curl -s http://localhost:%d/syncular/health/ready", port);
            say("  Ctrl-C stops the server and the database.");
        }
        int exit = micro.waitFor();
        say("Payara Micro exited with %d", exit);
        System.exit(exit == 0 ? 0 : 1);
    }

    private Process startMicro(Path work, int port, String jdbcUrl) throws IOException {
        // A fresh root per start: reusing one together with --deploy redeploys a stale copy (TOOLCHAIN §5).
        try (Stream<Path> old = Files.list(work)) {
            for (Path p : old.filter(p -> p.getFileName().toString().startsWith("micro-root-")).toList()) deleteTree(p);
        }
        Path root = work.resolve("micro-root-" + System.currentTimeMillis());
        Map<String, String> props = new TreeMap<>();
        props.put("syncular.db.url", jdbcUrl);
        props.put("syncular.db.user", "postgres");
        props.put("syncular.db.password", "postgres");
        if (!Boolean.parseBoolean(System.getProperty("syncular.conformance-host", "false"))) {
            // The embedded default: one development actor holding every scope, so unmodified clients sync at once.
            props.put("syncular.auth.mode", "fixed");
            props.put("syncular.auth.fixed.allowed-scopes", "*");
        }
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith("syncular.") && !key.startsWith("syncular.run.") && !key.startsWith("syncular.dev.")
                    && !key.equals("syncular.data-dir") && !key.equals("syncular.port")) {
                props.put(key, System.getProperty(key));
            }
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(System.getProperty("syncular.dev.jvm-options", DEFAULT_JVM_OPTIONS).trim().split("\\s+")));
        props.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of("-jar", required("syncular.run.micro"),
                "--deploy", required("syncular.run.war"),
                "--port", String.valueOf(port),
                "--nocluster",
                "--rootdir", root.toString()));
        Path postBoot = work.resolve(root.getFileName() + "-post-boot.asadmin");
        Files.write(postBoot, POST_BOOT_COMMANDS);
        cmd.addAll(List.of("--postbootcommandfile", postBoot.toString()));
        String micro = System.getProperty("syncular.dev.micro-options", "").trim();
        if (!micro.isEmpty()) cmd.addAll(List.of(micro.split("\\s+")));
        return new ProcessBuilder(cmd).inheritIO().start();
    }

    private boolean awaitReady(URI ready) throws InterruptedException {
        // HTTP/1.1: the JDK client's default h2c upgrade, tried while Grizzly is still starting, once left every
        // probe of a run timing out for the whole five minutes although the server answered curl at once
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline && micro.isAlive()) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) return true;
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(500);
        }
        if (micro.isAlive()) say("Syncular did not become ready within %s; last answer: %s", READY_TIMEOUT, last);
        return false;
    }

    /**
     * A killed run leaves {@code postmaster.pid} behind. If its process is gone the file is stale and removed; if a
     * postmaster from that run still holds the directory, it is asked to shut down first.
     */
    static void recoverStalePostmaster(Path pgData) throws IOException, InterruptedException {
        Path pidFile = pgData.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) return;
        List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
        Optional<ProcessHandle> owner = lines.isEmpty() ? Optional.empty()
                : parsePid(lines.get(0)).flatMap(ProcessHandle::of)
                        .filter(h -> h.info().command().map(c -> c.contains("postgres")).orElse(false));
        if (owner.isPresent()) {
            say("stopping PostgreSQL left running by an earlier run (pid %d)", owner.get().pid());
            owner.get().destroy(); // SIGTERM: PostgreSQL's "smart" shutdown
            try {
                owner.get().onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IOException("PostgreSQL from an earlier run (pid " + owner.get().pid()
                        + ") did not stop; stop it, then start again", e);
            }
        } else {
            say("removing stale %s from a killed run", pidFile);
        }
        Files.deleteIfExists(pidFile);
    }

    private static Optional<Long> parsePid(String line) {
        try {
            return Optional.of(Long.parseLong(line.trim()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private synchronized void stop(Path throwAwayDir) {
        if (micro != null && micro.isAlive()) {
            say("stopping Payara Micro");
            micro.destroy();
            try {
                if (!micro.waitFor(30, TimeUnit.SECONDS)) micro.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (pg != null) {
            say("stopping PostgreSQL");
            try {
                pg.close();
            } catch (IOException e) {
                say("PostgreSQL did not stop cleanly: %s", e.getMessage());
            }
            pg = null;
        }
        if (throwAwayDir != null) {
            try {
                deleteTree(throwAwayDir);
            } catch (IOException ignored) {
                // a temp dir; the OS cleans it eventually
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank()) throw new IllegalStateException(key + " is not set (run through mvn -Prun)");
        return v;
    }

    private static void say(String format, Object... args) {
        System.out.println("[syncular] " + String.format(format, args));
        System.out.flush();
    }
}

package syncular.jakarta.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * One Payara Micro process with one WAR: what the {@code *MicroIT} classes start, kill and restart to test several
 * nodes on one database and a node dying with {@code kill -9}. The Arquillian containers cannot do either: they are
 * one shared server per execution.
 *
 * <p>Each start gets a fresh {@code --rootdir} (reusing one with {@code --deploy} redeploys a stale copy, TOOLCHAIN §5),
 * a free port, {@code --nocluster} (nodes meet only through PostgreSQL, as in production), and the embedded
 * PostgreSQL of this failsafe JVM through {@code -Dsyncular.db.*}. Its output goes to a log file under
 * {@code target/micro/}, never to the test's console. A JVM shutdown hook kills every node still alive, so a failed or
 * interrupted test leaves no process behind.
 */
final class MicroNode implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(Long.getLong("syncular.it.micro.ready-s", 240));
    private static final Set<MicroNode> ALIVE = ConcurrentHashMap.newKeySet();
    private static final AtomicInteger STARTS = new AtomicInteger();
    /**
     * The node JVM's options. By default C1 only and the serial collector: a faster start on a small shared machine
     * (nodes live seconds). A benchmark run replaces them with a production JVM's
     * ({@code -Dsyncular.it.micro.jvm="-Xms1g -Xmx1g"}, space-separated), since C1 alone runs the hot paths several
     * times slower.
     */
    private static final List<String> JVM_OPTIONS = List.of(System.getProperty("syncular.it.micro.jvm",
            "-Xmx640m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC").trim().split("\\s+"));

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (MicroNode n : ALIVE) n.process.destroyForcibly();
        }, "micro-nodes-kill"));
    }

    final String name;
    final int port;
    final Path log;
    private final Process process;
    private final long startedNanos;

    private MicroNode(String name, int port, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.process = process;
        this.startedNanos = System.nanoTime();
    }

    /**
     * Exports {@code war} as {@code <name>.war} (so the context root is {@code /<name>}), starts Payara Micro with it
     * and waits until {@code /<name>/health/ready} answers 200. {@code props} become {@code -D} system properties of
     * the server JVM, after the database ones (so a test may override them).
     */
    static MicroNode start(String name, WebArchive war, Map<String, String> props) {
        MicroNode node = launch(name, war, props);
        try {
            node.awaitReady(READY_TIMEOUT);
        } catch (RuntimeException | Error e) {
            node.kill();
            throw e;
        }
        return node;
    }

    /** Starts the process without waiting for readiness (for starting several nodes at once). */
    static MicroNode launch(String name, WebArchive war, Map<String, String> props) {
        int n = STARTS.incrementAndGet();
        Path dir = Path.of("target", "micro", String.format("%02d-%s", n, name)).toAbsolutePath();
        try {
            deleteTree(dir);   // an earlier run's node of the same number: its root must not be reused
            Files.createDirectories(dir);
            Path warFile = dir.resolve(name + ".war");
            war.as(ZipExporter.class).exportTo(warFile.toFile(), true);
            Path root = dir.resolve("root");   // fresh: the directory is new for this start
            Path log = dir.resolve("server.log");
            int port = freePort();

            Map<String, String> system = new TreeMap<>();
            system.put("syncular.db.url", "jdbc:postgresql://localhost:" + Integer.getInteger("syncular.it.pg.port")
                    + "/postgres");
            system.put("syncular.db.user", "postgres");
            system.put("syncular.db.password", "postgres");
            system.putAll(props);
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(JVM_OPTIONS);
            system.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
            cmd.addAll(List.of("-jar", microJar().toString(), "--deploy", warFile.toString(), "--port",
                    String.valueOf(port), "--nocluster", "--rootdir", root.toString()));
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            MicroNode node = new MicroNode(name, port, log, p);
            ALIVE.add(node);
            return node;
        } catch (IOException e) {
            throw new UncheckedIOException("Payara Micro " + name + " did not start", e);
        }
    }

    private static Path microJar() {
        Path jar = Path.of(System.getProperty("syncular.it.micro.jar", "target/payara-micro.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no Payara Micro jar at " + jar + " (the build copies it in "
                    + "pre-integration-test)");
        }
        return jar;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    /** {@link #awaitReady(Duration)} with the default timeout ({@code syncular.it.micro.ready-s}, 240 s). */
    void awaitReady() { awaitReady(READY_TIMEOUT); }

    /** Polls {@code health/ready} until 200; fails with the log's tail if the process exits or time runs out. */
    void awaitReady(Duration timeout) {
        URI ready = base().resolve("health/ready");
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                ALIVE.remove(this);
                throw new AssertionError("Payara Micro " + name + " exited with " + process.exitValue()
                        + " before it was ready; log " + log + ":\n" + tail(80));
            }
            try {
                var r = It.get(ready);
                if (r.statusCode() == 200) {
                    System.out.printf("MICRO %s ready on port %d (pid %d) in %d ms%n", name, port, pid(),
                            (System.nanoTime() - startedNanos) / 1_000_000);
                    return;
                }
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + name, e);
            }
            sleep(250);
        }
        throw new AssertionError("Payara Micro " + name + " not ready within " + timeout + " (last: " + last
                + "); log " + log + ":\n" + tail(80));
    }

    /** {@code http://localhost:<port>/<name>/}. */
    URI base() { return URI.create("http://localhost:" + port + "/" + name + "/"); }

    long pid() { return process.pid(); }

    boolean alive() { return process.isAlive(); }

    /** SIGKILL ({@code kill -9}): no shutdown hook, no connection closed by the JVM; waits until the process is gone. */
    void kill() {
        process.destroyForcibly();
        awaitExit(30);
        System.out.printf("MICRO %s killed (pid %d)%n", name, pid());
    }

    /** Graceful stop (SIGTERM: Payara Micro undeploys and closes its pools); SIGKILL after 60 s. */
    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        awaitExit(30);
    }

    private void awaitExit(int seconds) {
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError("Payara Micro " + name + " (pid " + pid() + ") did not exit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + name + " to exit", e);
        } finally {
            if (!process.isAlive()) ALIVE.remove(this);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) stop();
        ALIVE.remove(this);
    }

    /** The whole log so far. */
    String logText() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last {@code lines} lines of the log. */
    String tail(int lines) {
        List<String> all = logText().lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /**
     * The local TCP ports of this process's connections to {@code remotePort} (Linux {@code /proc}): what
     * {@code pg_stat_activity.client_port} shows for its PostgreSQL backends, so a test can tell one node's sessions
     * from another's even when both use the same application_name.
     */
    Set<Integer> localPortsTo(int remotePort) {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid()), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) inodes.add(target.substring(8, target.length() - 1));
                } catch (IOException closedMeanwhile) {
                    // the descriptor went away while we listed: not a live connection
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the sockets of pid " + pid(), e);
        }
        Set<Integer> ports = new HashSet<>();
        for (String table : List.of("tcp", "tcp6")) {
            Path file = Path.of("/proc", String.valueOf(pid()), "net", table);
            if (!Files.exists(file)) continue;
            try {
                List<String> lines = Files.readAllLines(file);
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length < 10 || !inodes.contains(f[9])) continue;
                    int local = Integer.parseInt(f[1].substring(f[1].lastIndexOf(':') + 1), 16);
                    int remote = Integer.parseInt(f[2].substring(f[2].lastIndexOf(':') + 1), 16);
                    if (remote == remotePort) ports.add(local);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return ports;
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    @Override
    public String toString() { return "MicroNode[" + name + " port " + port + " pid " + pid() + "]"; }
}

package syncular.jakarta.it;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Starts one embedded PostgreSQL per failsafe JVM before any test class, and so before Arquillian starts the
 * application server, on the port the build reserved ({@code syncular.it.pg.port}). The servers get its URL through
 * the {@code SYNCULAR_DB_*} environment variables failsafe sets. Client side only: a JUnit extension would also run
 * inside the server, where zonky is absent. Does nothing unless {@code syncular.it.pg=true}.
 *
 * <p>The data directory is kept across {@link #stop()} / {@link #start()}, so an IT can take the database away
 * from a running server and bring the same database back on the same port.
 */
public class EmbeddedPgSession implements LauncherSessionListener {
    private static EmbeddedPostgres pg;
    private static Path dataDir;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        if (!Boolean.getBoolean("syncular.it.pg") || pg != null) return;
        dataDir = Path.of("target", "it-pg-data-" + System.getProperty("syncular.it.server", "server"));
        deleteTree(dataDir);
        start();
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        stop();
        if (dataDir != null) deleteTree(dataDir);
    }

    /** (Re)starts the database on the reserved port with the session's data directory. */
    public static synchronized void start() {
        if (pg != null) return;
        int port = Integer.getInteger("syncular.it.pg.port", 0);
        try {
            pg = EmbeddedPostgres.builder()
                    .setPort(port)
                    .setDataDirectory(dataDir.toFile())
                    .setCleanDataDirectory(false)
                    .setOverrideWorkingDirectory(new File(System.getProperty("ot.epg.working-dir", "target/embedded-pg")))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not start on port " + port, e);
        }
    }

    /** Stops the database, keeping its data: the servers see it as unreachable. */
    public static synchronized void stop() {
        if (pg == null) return;
        try {
            pg.close();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not stop", e);
        } finally {
            pg = null;
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

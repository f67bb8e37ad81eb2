package syncular.jakarta.it;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Starts one embedded PostgreSQL per failsafe JVM before any test class, and so before Arquillian starts the
 * application server, on the port the build reserved ({@code syncular.it.pg.port}). The servers get its URL through
 * the {@code SYNCULAR_DB_*} environment variables failsafe sets. Client side only: a JUnit extension would also run
 * inside the server, where zonky is absent. Does nothing unless {@code syncular.it.pg=true}.
 */
public class EmbeddedPgSession implements LauncherSessionListener {
    private static EmbeddedPostgres pg;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        if (!Boolean.getBoolean("syncular.it.pg") || pg != null) return;
        int port = Integer.getInteger("syncular.it.pg.port", 0);
        try {
            pg = EmbeddedPostgres.builder()
                    .setPort(port)
                    .setOverrideWorkingDirectory(new File(System.getProperty("ot.epg.working-dir", "target/embedded-pg")))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not start on port " + port, e);
        }
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        if (pg != null) {
            try {
                pg.close();
            } catch (IOException ignored) {
                // the JVM is ending; zonky's own shutdown hook is the last resort
            }
            pg = null;
        }
    }

    public static EmbeddedPostgres instance() { return pg; }
}

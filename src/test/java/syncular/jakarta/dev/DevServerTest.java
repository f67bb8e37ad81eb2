package syncular.jakarta.dev;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevServerTest {
    @Test
    void removesAPostmasterPidFileWhoseProcessIsGone(@TempDir Path data) throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path pid = data.resolve("postmaster.pid");
        Files.writeString(pid, gone.pid() + "\n" + data + "\n");
        DevServer.recoverStalePostmaster(data);
        assertFalse(Files.exists(pid));
    }

    @Test
    void leavesADataDirectoryWithoutPidFileAlone(@TempDir Path data) throws Exception {
        Files.writeString(data.resolve("PG_VERSION"), "17\n");
        DevServer.recoverStalePostmaster(data);
        assertTrue(Files.exists(data.resolve("PG_VERSION")));
    }
}

package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Waits on what PostgreSQL itself reports (pg_stat_activity), not on sleeps: a test that needs "this writer is now
 * blocked on a lock" polls until the server says so, with a deadline that fails with a message.
 */
final class LockWaits {
    private LockWaits() { }

    /** Blocks until {@code n} backends of this database wait on a heavyweight lock. */
    static void awaitLockWaiters(DataSource db, int n, long timeoutMs) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")) {
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) >= n) return;
                }
                if (System.nanoTime() > deadline) throw new AssertionError(n + " lock waiter(s) never appeared");
                Thread.sleep(5);   // polling the server's own view, not guessing a duration
            }
        }
    }
}

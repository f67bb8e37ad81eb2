package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PushCommit;

/**
 * A backfill batch dies in the middle of its transaction (issue 7 "kill mid-backfill", at the database level): the
 * batch has taken its advisory lock, claimed the next owner epoch and read its source rows, and waits on the
 * partition lock (held here by the test); then its statement is cancelled with {@code pg_cancel_backend}, which
 * aborts the transaction exactly where it stands. The claim rolls back with it, the next timer tick redoes exactly
 * that batch under the same clientCommitId, and the backfill completes with the exact projection: no row missing or
 * written twice, no batch applied twice, the watermark never lower.
 *
 * <p>Not a process kill: the managed servers are shared by every IT class. {@code pg_terminate_backend} (the
 * session dying, as with a killed process) was tried first: Payara's pool, with no connection validation
 * configured, kept handing out the dead connection ("This connection has been closed") and the runner could never
 * run again; that is a pool-configuration finding, not a backfill one (see the issue 7 report).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class CrashRecoveryBackfillIT extends DatabaseIsolation {
    static final String PARTITION = "it-crash";
    static final String NAME = "todo_titles_crash";
    static final String CLIENT = "[\"backfill\",\"" + NAME + "\"]";

    @ArquillianResource
    Deployer deployer;

    static Map<String, String> config(Map<String, String> extra) {
        Map<String, String> m = new java.util.TreeMap<>(Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user", "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*"));
        m.putAll(extra);
        return m;
    }

    @Deployment(name = "crash-v1", managed = false, testable = false)
    static WebArchive v1() { return It.withConfig(It.war("crash-v1"), config(Map.of())); }

    @Deployment(name = "crash-worker", managed = false, testable = false)
    static WebArchive worker() {
        return It.withConfig(It.war("crash-worker"), config(Map.of(
                "syncular.schema", "syncular/it/upgrade-v2.json",
                "syncular.backfill.definitions", NAME + "@2:todos->todo_titles",
                "syncular.backfill.batch-size", "3",
                "syncular.backfill.interval-ms", "300",
                // a batch every 300 ms, so the pass is still running when the test interferes
                "syncular.backfill.pause-ms", "300")))
                .addAsResource(new org.jboss.shrinkwrap.api.asset.StringAsset(RollingUpgradeMigrationIT.V2_SCHEMA),
                        "syncular/it/upgrade-v2.json");
    }

    static long one(Connection c, String sql, String... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) ps.setString(i + 1, params[i]);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    @Test
    void aBatchAbortedMidTransactionIsRedoneOnceAndTheBackfillCompletesExactly() throws Exception {
        deployer.deploy("crash-v1");
        try {
            It.await(It.base("crash-v1").resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
            SyncTestClient writer = new SyncTestClient(It.base("crash-v1"), "writer", "list-crash");
            List<PushCommit> pushes = new ArrayList<>();
            for (int i = 0; i < 12; i++) pushes.add(writer.upsert(String.format("todo-%02d", i), "Title " + i, null));
            writer.round(pushes);
        } finally {
            deployer.undeploy("crash-v1");
        }

        deployer.deploy("crash-worker");
        try (Connection watch = It.jdbc(); Connection holder = It.jdbc()) {
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            // let the first batch commit, so the one we kill is in the middle of the pass
            while (one(watch, "SELECT batches FROM sync_backfill_passes WHERE partition = ? AND name = ?",
                    PARTITION, NAME) < 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            holder.setAutoCommit(false);
            one(holder, "SELECT 1 FROM sync_partitions WHERE partition = ? FOR UPDATE", PARTITION);
            long committedEpoch = one(watch, "SELECT owner_epoch FROM sync_backfill_checkpoints WHERE partition = ? "
                    + "AND name = ?", PARTITION, NAME);
            long watermarkBefore = one(watch, "SELECT watermark FROM sync_backfill_checkpoints WHERE partition = ? "
                    + "AND name = ?", PARTITION, NAME);
            String position;
            try (PreparedStatement ps = watch.prepareStatement("SELECT source_index || '/' || "
                    + "COALESCE(after_row_id, '') FROM sync_backfill_passes WHERE partition = ? AND name = ?")) {
                ps.setString(1, PARTITION);
                ps.setString(2, NAME);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    position = rs.getString(1);
                }
            }
            // the next batch: lock, claim, rows read, now waiting for the partition lock we hold
            long victim = -1;
            while (victim < 0 && System.nanoTime() < deadline) {
                victim = one(watch, "SELECT a.pid FROM pg_stat_activity a WHERE a.application_name = 'syncular' "
                        + "AND a.wait_event_type = 'Lock' AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid "
                        + "AND l.locktype = 'advisory' AND l.granted) LIMIT 1");
                if (victim < 0) Thread.sleep(50);
            }
            assertTrue(victim > 0, "a backfill batch was waiting on the partition lock");
            assertEquals(1, one(watch, "SELECT count(*) FROM (SELECT pg_cancel_backend(" + victim + ")) t"));
            holder.rollback();

            while (one(watch, "SELECT count(*) FROM sync_backfill_checkpoints WHERE partition = ? AND name = ? "
                    + "AND state = 'activated'", PARTITION, NAME) < 1 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals("activated", state(watch));
            assertTrue(one(watch, "SELECT watermark FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?",
                    PARTITION, NAME) >= watermarkBefore, "the watermark never decreases");
            assertEquals(0, one(watch, "SELECT count(*) FROM todos t FULL JOIN todo_titles p "
                    + "ON p.\"_sync_partition\" = t.\"_sync_partition\" AND p.id = t.id "
                    + "WHERE COALESCE(t.\"_sync_partition\", p.\"_sync_partition\") = ? "
                    + "AND (t.id IS NULL OR p.id IS NULL OR t.title <> p.title)", PARTITION),
                    "the projection is exactly the source");
            assertEquals(12, one(watch, "SELECT count(*) FROM todo_titles WHERE \"_sync_partition\" = ?", PARTITION));
            assertEquals(1, one(watch, "SELECT max(\"_sync_server_version\") FROM todo_titles "
                    + "WHERE \"_sync_partition\" = ?", PARTITION), "no projection row written twice");
            assertEquals(4, one(watch, "SELECT count(DISTINCT client_commit_id) FROM sync_commits "
                    + "WHERE partition = ? AND client_id = ?", PARTITION, CLIENT), "12 rows in batches of 3");
            assertEquals(4, one(watch, "SELECT count(*) FROM sync_commits WHERE partition = ? AND client_id = ?",
                    PARTITION, CLIENT), "no batch applied twice");
            String redone = (committedEpoch + 1) + ":1:" + position;
            assertEquals(1, one(watch, "SELECT count(*) FROM sync_commits WHERE partition = ? AND client_id = ? "
                    + "AND client_commit_id = ?", PARTITION, CLIENT, redone),
                    "the killed batch's claim rolled back: its redo took the same epoch and commit id " + redone);
        } finally {
            deployer.undeploy("crash-worker");
        }
    }

    static String state(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT state FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?")) {
            ps.setString(1, PARTITION);
            ps.setString(2, NAME);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : "absent";
            }
        }
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ResponseMessage;

/**
 * The docs/operations.md restore procedure on both servers, with live clients (issue 19): wire 2 clients sync and
 * a realtime socket listens while the database is dumped; they go on writing and pulling past the dump; the dump is
 * restored into the running server's database and {@code POST admin/log-epochs} rotates the epoch, without a
 * restart. Then every client is told {@code resetRequired} once, re-bootstraps and replays what it never had
 * acknowledged; the socket is closed 1012 and can reconnect; the restored idempotency records answer a replayed
 * pre-dump commit {@code cached}; the log goes on from the restored head; and every replica equals the server.
 *
 * <p>The dump is PostgreSQL's own {@code COPY} of every table of the schema in one snapshot (what
 * {@code pg_dump --data-only} writes), restored with {@code COPY FROM} in one transaction.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class BackupRestoreIT extends DatabaseIsolation {
    private static final String PARTITION = "it-backup";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("backup"), Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.partition", PARTITION, "syncular.auth.fixed.allowed-scopes", "*"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    /** Table name → its rows in COPY binary format, all read in one REPEATABLE READ snapshot. */
    private static Map<String, byte[]> dump() throws Exception {
        Map<String, byte[]> tables = new LinkedHashMap<>();
        try (Connection c = It.jdbc()) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            List<String> names = new ArrayList<>();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")) {
                while (rs.next()) names.add(rs.getString(1));
            }
            for (String t : names) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                copy.copyOut("COPY \"" + t + "\" TO STDOUT (FORMAT binary)", out);
                tables.put(t, out.toByteArray());
            }
            c.commit();
        }
        return tables;
    }

    /** Every dumped table gets back exactly its dumped rows, in one transaction. */
    private static void restore(Map<String, byte[]> dump) throws Exception {
        try (Connection c = It.jdbc()) {
            c.setAutoCommit(false);
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            try (Statement s = c.createStatement()) {
                s.execute("TRUNCATE " + String.join(", ", dump.keySet().stream().map(t -> "\"" + t + "\"").toList()));
            }
            // a table with a foreign key (segment publications) after the one it references
            List<String> order = new ArrayList<>(dump.keySet());
            order.sort(java.util.Comparator.comparing(t -> t.equals("sync_segment_publications")));
            for (String t : order) {
                copy.copyIn("COPY \"" + t + "\" FROM STDIN (FORMAT binary)", new ByteArrayInputStream(dump.get(t)));
            }
            c.commit();
        }
    }

    private static long head() throws Exception {
        try (Connection c = It.jdbc(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT max_commit_seq FROM sync_partitions WHERE partition = '" + PARTITION + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static PushResult.Status status(ResponseMessage m, String clientCommitId) {
        return m.frames().stream().filter(f -> f instanceof PushResult r && r.clientCommitId().equals(clientCommitId))
                .map(f -> ((PushResult) f).status()).findFirst().orElseThrow(() -> new AssertionError(
                        "no result for " + clientCommitId + " in " + m.frames()));
    }

    @Test
    void aRestoreUnderLiveClientsResetsEveryClientOntoTheRestoredLogAndTheyConverge() throws Exception {
        List<SyncTestClient> writers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            writers.add(new SyncTestClient(base.toURI(), "restore-w" + i, "R" + i).onWire2());
        }
        SyncTestClient reader = new SyncTestClient(base.toURI(), "restore-reader", "R1").onWire2();
        reader.round(List.of());
        PushCommit firstOfW2 = writers.get(1).upsert("R2-first", "first", null);
        writers.get(1).round(List.of(firstOfW2));

        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=" + reader.clientId)) {
            socket.nextEvent(10);
            live(pool, writers, "pre", 4);
            long dumpedHead = head();
            Map<String, byte[]> dump = dump();
            live(pool, writers, "post", 3);   // acknowledged and pulled past the dump: lost by the restore
            reader.round(List.of());
            assertTrue(reader.replica.containsKey("R1-post-2"), "the reader saw the later commits");
            PushCommit offline = writers.get(0).upsert("R1-offline", "never sent before the restore", null);

            restore(dump);
            HttpResponse<String> rotated = It.postBodyWithHeader(base.toURI().resolve("admin/log-epochs"),
                    "application/json", "", "Authorization", CheckpointAdminIT.basic("admin1", "Adm1n!pass"));
            assertEquals(200, rotated.statusCode(), rotated.body());
            assertTrue(socket.awaitClose(30).startsWith("1012"), "the socket of the old log is closed to reconnect");
            try (RealtimeTestSocket reconnected = RealtimeTestSocket.open(base.toURI(), "clientId=" + reader.clientId)) {
                assertEquals("hello", reconnected.nextEvent(10).get("event"), "and reconnects to the restored log");
            }

            ResponseMessage replayed = writers.get(0).round(List.of(offline));
            assertEquals(PushResult.Status.APPLIED, status(replayed, offline.clientCommitId()),
                    "the outbox replays on the restored log");
            assertEquals(dumpedHead + 1, head(), "the log goes on from the restored head");
            ResponseMessage again = writers.get(1).round(List.of(firstOfW2));
            assertEquals(PushResult.Status.CACHED, status(again, firstOfW2.clientCommitId()),
                    "a commit the dump holds answers from its restored idempotency record");
        } finally {
            pool.shutdownNow();
        }
        writers.get(2).round(List.of());
        reader.round(List.of());
        for (SyncTestClient w : writers) assertEquals(1, w.resets(), w.clientId + " resets once");
        assertEquals(1, reader.resets());

        for (SyncTestClient w : writers) {
            SyncTestClient fresh = new SyncTestClient(base.toURI(), "restore-check-" + w.list, w.list).onWire2();
            fresh.round(List.of());
            assertEquals(fresh.snapshot(), w.snapshot(), w.clientId + " converged with the server");
            assertTrue(fresh.replica.keySet().stream().noneMatch(id -> id.contains("-post-")),
                    "nothing of the lost commits is served: " + fresh.replica.keySet());
            assertTrue(fresh.replica.containsKey(w.list + "-pre-3"), "everything of the dump is");
        }
        assertTrue(reader.replica.containsKey("R1-offline") && !reader.replica.containsKey("R1-post-0"),
                "the reader re-bootstrapped onto the restored log: " + reader.replica.keySet());
    }

    /** {@code rounds} rounds per writer, concurrently, each pushing one row of its own list and pulling. */
    private static void live(ExecutorService pool, List<SyncTestClient> writers, String tag, int rounds)
            throws Exception {
        List<Future<?>> running = new ArrayList<>();
        for (SyncTestClient w : writers) {
            running.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    PushCommit c = w.upsert(w.list + "-" + tag + "-" + i, tag + " " + i, null);
                    ResponseMessage m = w.round(List.of(c));
                    if (status(m, c.clientCommitId()) != PushResult.Status.APPLIED) {
                        throw new AssertionError(w.clientId + ": " + m.frames());
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : running) f.get();
    }
}

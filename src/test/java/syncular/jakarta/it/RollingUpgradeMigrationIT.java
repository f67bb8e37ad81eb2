package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;

/**
 * A rolling upgrade N=1 → N+1=2 with a projection backfill on one server (issue 7, RFC 0007), steps in order:
 * a v1 process serves and an old writer may append; a v2 process that declares the {@code todo_titles} backfill
 * migrates and serves; a second v2 process that does not declare it is refused with {@code {partition, projection}}
 * and its readiness is DOWN; the v1 process is refused with {@code {storedSchemaVersion, runningSchemaVersion}}; an
 * old writer (raw JDBC, no writer_version) is rejected by the fence trigger; a v2 worker with the backfill timer
 * fills the projection through the push path and activates it, after which both v2 processes serve and the v1
 * process still does not.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RollingUpgradeMigrationIT extends DatabaseIsolation {
    static final String PARTITION = "it-upgrade";
    static final String NAME = "todo_titles_v2";
    static final String LIST = "list-upgrade";
    static final String V2_SCHEMA = """
            {"version": 2, "tables": [
              {"name": "todos", "primaryKey": "id",
               "columns": [{"name": "id", "type": "string", "nullable": false},
                           {"name": "list_id", "type": "string", "nullable": false},
                           {"name": "title", "type": "string", "nullable": false},
                           {"name": "done", "type": "boolean", "nullable": false},
                           {"name": "position", "type": "integer", "nullable": false},
                           {"name": "updated_at_ms", "type": "integer", "nullable": false}],
               "scopes": [{"pattern": "list:{list_id}"}]},
              {"name": "todo_titles", "primaryKey": "id",
               "columns": [{"name": "id", "type": "string", "nullable": false},
                           {"name": "list_id", "type": "string", "nullable": false},
                           {"name": "title", "type": "string", "nullable": false}],
               "scopes": [{"pattern": "list:{list_id}"}]}]}""";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @ArquillianResource
    Deployer deployer;
    private final List<String> deployed = new ArrayList<>();

    static Map<String, String> base(Map<String, String> extra) {
        Map<String, String> m = new TreeMap<>(Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*",
                "syncular.backfill.interval-ms", "250"));
        m.putAll(extra);
        return m;
    }

    static WebArchive v2(String name, Map<String, String> extra) {
        Map<String, String> config = new TreeMap<>(extra);
        config.put("syncular.schema", "syncular/it/upgrade-v2.json");
        return It.withConfig(It.war(name), base(config))
                .addAsResource(new StringAsset(V2_SCHEMA), "syncular/it/upgrade-v2.json");
    }

    @Deployment(name = "upgrade-v1", managed = false, testable = false)
    static WebArchive v1() { return It.withConfig(It.war("upgrade-v1"), base(Map.of())); }

    /** Declares the backfill, runner off: it serves past the pending checkpoint but never fills it. */
    @Deployment(name = "upgrade-declaring", managed = false, testable = false)
    static WebArchive declaring() {
        return v2("upgrade-declaring", Map.of("syncular.backfill.definitions", NAME + "@2:todos->todo_titles",
                "syncular.backfill.enabled", "false"));
    }

    /** The same version, no declaration. */
    @Deployment(name = "upgrade-plain", managed = false, testable = false)
    static WebArchive plain() { return v2("upgrade-plain", Map.of()); }

    /** Declares and runs the backfill in small batches. */
    @Deployment(name = "upgrade-worker", managed = false, testable = false)
    static WebArchive worker() {
        return v2("upgrade-worker", Map.of("syncular.backfill.definitions", NAME + "@2:todos->todo_titles",
                "syncular.backfill.batch-size", "2"));
    }

    void deploy(String name) throws Exception {
        deployer.deploy(name);
        deployed.add(name);
        It.await(It.base(name).resolve("health/live"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        // storage started (UP) or refusing through the gate: either way the runtime answers
        It.await(It.base(name).resolve("health/ready"), r -> r.body().contains("serve-gate"), Duration.ofSeconds(90));
    }

    @AfterAll
    void undeployAll() {
        for (int i = deployed.size() - 1; i >= 0; i--) {
            try {
                deployer.undeploy(deployed.get(i));
            } catch (RuntimeException ignored) {
                // the next deployment of the same name replaces it; the database is dropped anyway
            }
        }
    }

    /** One sync round (a pull of the demo subscription, wire 1, schema version 1 in the header). */
    static HttpResponse<String> round(String deployment) throws Exception {
        SyncTestClient client = new SyncTestClient(It.base(deployment), "client-" + deployment, LIST);
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(client.clientId, 1));
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(client.subscription());
        HttpResponse<byte[]> r = client.post(RequestEncoder.encode(new RequestMessage(1, frames)), false);
        return new HttpResponse<>() {
            public int statusCode() { return r.statusCode(); }
            public HttpRequest request() { return r.request(); }
            public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
            public java.net.http.HttpHeaders headers() { return r.headers(); }
            public String body() { return r.statusCode() == 200 ? "" : new String(r.body(), StandardCharsets.UTF_8); }
            public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return r.sslSession(); }
            public URI uri() { return r.uri(); }
            public HttpClient.Version version() { return r.version(); }
        };
    }

    /** A commit appended with raw JDBC like an unaware old binary (no writer_version); always rolled back. */
    static void oldWriterAppend() throws SQLException {
        try (Connection c = It.jdbc()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO sync_commits(partition, commit_seq, "
                    + "client_id, client_commit_id, actor_id, created_at_ms) VALUES (?, 900000, 'old', 'old-1', "
                    + "'old', 0)")) {
                ps.setString(1, PARTITION);
                ps.executeUpdate();
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    static Map<String, String> rows(String table) throws SQLException {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement("SELECT id, title FROM " + table
                + " WHERE \"_sync_partition\" = ?")) {
            ps.setString(1, PARTITION);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    static String checkpointState() throws SQLException {
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement(
                "SELECT state FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?")) {
            ps.setString(1, PARTITION);
            ps.setString(2, NAME);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : "absent";
            }
        }
    }

    @Test
    @Order(1)
    void beforeTheMigrationTheV1ProcessServesAndAnOldWriterMayAppend() throws Exception {
        deploy("upgrade-v1");
        It.await(It.base("upgrade-v1").resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(60));
        SyncTestClient writer = new SyncTestClient(It.base("upgrade-v1"), "writer", LIST);
        List<syncular.jakarta.wire.PushCommit> pushes = new ArrayList<>();
        for (int i = 0; i < 7; i++) pushes.add(writer.upsert("todo-" + i, "Title " + i, null));
        writer.round(pushes);
        assertEquals(7, rows("todos").size());
        oldWriterAppend();   // no fence yet: the trigger lets it through (rolled back, nothing kept)
    }

    @Test
    @Order(2)
    void theDeclaringV2ProcessMigratesInstallsTheCheckpointAndServes() throws Exception {
        deploy("upgrade-declaring");
        assertEquals("declared", checkpointState());
        HttpResponse<String> ready = It.await(It.base("upgrade-declaring").resolve("health/ready"),
                r -> r.statusCode() == 200, Duration.ofSeconds(30));
        assertTrue(ready.body().contains("serve-gate"), ready.body());
        assertEquals(200, round("upgrade-declaring").statusCode());
    }

    @Test
    @Order(3)
    void aV2ProcessThatDoesNotDeclareIsRefusedWithPartitionAndProjection() throws Exception {
        deploy("upgrade-plain");
        HttpResponse<String> r = round("upgrade-plain");
        assertEquals(503, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"code\":\"sync.schema_not_ready\""), r.body());
        assertTrue(r.body().contains("\"details\":{\"partition\":\"" + PARTITION + "\",\"projection\":\"" + NAME
                + "\"}"), r.body());
        HttpResponse<String> segment = It.get(It.base("upgrade-plain").resolve("segments/any-segment-id"),
                "X-Syncular-Scopes", "{\"list_id\":[\"l1\"]}");
        assertEquals(503, segment.statusCode(), "a segment download meets the same gate: " + segment.body());
        assertTrue(segment.body().contains("\"projection\":\"" + NAME + "\""), segment.body());
        HttpResponse<String> ready = It.get(It.base("upgrade-plain").resolve("health/ready"));
        assertEquals(503, ready.statusCode(), ready.body());
        assertTrue(ready.body().contains("schema migration in progress"), ready.body());
        HttpResponse<String> detail = It.get(It.base("upgrade-plain").resolve("admin/health"), It.ADMIN);
        assertTrue(detail.body().contains(NAME), "the admin role sees which projection: " + detail.body());
        assertEquals(200, round("upgrade-declaring").statusCode(), "the declaring process still serves");
    }

    @Test
    @Order(4)
    void theV1ProcessIsRefusedWithBothSchemaVersions() throws Exception {
        HttpResponse<String> r = round("upgrade-v1");
        assertEquals(503, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"details\":{\"storedSchemaVersion\":2,\"runningSchemaVersion\":1}"), r.body());
        HttpResponse<String> segment = It.get(It.base("upgrade-v1").resolve("segments/any-segment-id"),
                "X-Syncular-Scopes", "{\"list_id\":[\"l1\"]}");
        assertEquals(503, segment.statusCode(), segment.body());
        assertTrue(segment.body().contains("\"storedSchemaVersion\":2"), segment.body());
        It.await(It.base("upgrade-v1").resolve("health/ready"), x -> x.statusCode() == 503, Duration.ofSeconds(30));
    }

    @Test
    @Order(5)
    void fromTheDeclarationOnAnOldWriterCannotAppend() {
        SQLException e = assertThrows(SQLException.class, RollingUpgradeMigrationIT::oldWriterAppend);
        assertTrue(e.getMessage().contains("writer_fence_rejected"), e.getMessage());
    }

    @Test
    @Order(6)
    void theTimerDrivenBackfillFillsTheProjectionThroughThePushPathAndActivates() throws Exception {
        deploy("upgrade-worker");
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!checkpointState().equals("activated") && System.nanoTime() < deadline) Thread.sleep(250);
        assertEquals("activated", checkpointState());
        assertEquals(rows("todos"), rows("todo_titles"), "every source row projected, nothing else");
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement("SELECT count(*), "
                + "count(DISTINCT client_commit_id), min(writer_version) FROM sync_commits WHERE partition = ? "
                + "AND client_id = ?")) {
            ps.setString(1, PARTITION);
            ps.setString(2, "[\"backfill\",\"" + NAME + "\"]");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(4, rs.getLong(1), "7 rows in batches of 2: four backfill commits");
                assertEquals(4, rs.getLong(2), "no batch applied twice");
                assertEquals(2, rs.getLong(3), "stamped with the new writer version");
            }
        }
    }

    @Test
    @Order(7)
    void afterActivationBothV2ProcessesServeAndTheV1ProcessStillDoesNot() throws Exception {
        assertEquals(200, round("upgrade-plain").statusCode());
        assertEquals(200, round("upgrade-declaring").statusCode());
        assertEquals(503, round("upgrade-v1").statusCode());
        It.await(It.base("upgrade-plain").resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(30));
    }

    @Test
    @Order(8)
    void theAdminEndpointShowsTheActivatedCheckpoint() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(It.base("upgrade-worker")
                        .resolve("admin/checkpoints")).header("Authorization", "Basic " + Base64.getEncoder()
                        .encodeToString("admin1:Adm1n!pass".getBytes(StandardCharsets.UTF_8))).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"name\":\"" + NAME + "\""), r.body());
        assertTrue(r.body().contains("\"state\":\"activated\""), r.body());
        assertTrue(r.body().contains("\"declares\":[\"" + NAME + "\"]"), r.body());
    }
}

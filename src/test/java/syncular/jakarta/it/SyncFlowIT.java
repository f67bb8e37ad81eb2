package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubStart;

/**
 * {@code POST /sync} end to end over HTTP on the demo schema, with built-in fixed authentication: clients converge,
 * conflicts carry the server row, a dropped response is replayed as {@code cached}, bad requests get catalog JSON.
 */
@ExtendWith(ArquillianExtension.class)
class SyncFlowIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("syncflow"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", "it-syncflow",
                "syncular.auth.fixed.allowed-scopes", "*",
                "syncular.cors.allowed-origins", "https://app.example"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    @Test
    void twoClientsConvergeOnTheServersRowsAndVersions() throws Exception {
        String list = "groceries-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-a-" + list, list);
        SyncTestClient b = new SyncTestClient(base.toURI(), "client-b-" + list, list);

        ResponseMessage first = a.round(List.of(a.upsert("todo-1", "Buy milk", null), a.upsert("todo-2", "Eggs", 0L)));
        List<PushResult> results = pushResults(first);
        assertEquals(PushResult.Status.APPLIED, results.get(0).status());
        assertEquals(PushResult.Status.APPLIED, results.get(1).status());
        b.round(List.of());
        assertEquals(List.of("todo-1@1:Buy milk", "todo-2@1:Eggs"), b.snapshot());

        a.round(List.of(a.upsert("todo-1", "Buy oat milk", 1L)));
        b.round(List.of(b.upsert("todo-3", "Bread", null)));
        a.round(List.of());
        b.round(List.of());
        assertEquals(List.of("todo-1@2:Buy oat milk", "todo-2@1:Eggs", "todo-3@1:Bread"), a.snapshot());
        assertEquals(a.snapshot(), b.snapshot());
        assertEquals(a.snapshot(), serverRows("it-syncflow", list));
    }

    @Test
    void aConflictReturnsTheServerRowAndRollsBackSiblings() throws Exception {
        String list = "conflict-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-a-" + list, list);
        SyncTestClient b = new SyncTestClient(base.toURI(), "client-b-" + list, list);
        a.round(List.of(a.upsert("row-1", "v1", null)));
        b.round(List.of());
        a.round(List.of(a.upsert("row-1", "v2 by a", 1L)));

        PushCommit stale = new PushCommit("b-stale", List.of(
                PushCommit.Operation.upsert("todos", "row-sibling", null, SyncTestClient.todo("row-sibling", list, "x", false, 1)),
                PushCommit.Operation.upsert("todos", "row-1", 1L, SyncTestClient.todo("row-1", list, "v2 by b", false, 1))));
        PushResult result = pushResults(b.round(List.of(stale))).get(0);
        assertEquals(PushResult.Status.REJECTED, result.status());
        assertEquals(1, result.results().size());
        PushResult.Conflict conflict = assertInstanceOf(PushResult.Conflict.class, result.results().get(0));
        assertEquals(1, conflict.opIndex());
        assertEquals("sync.version_conflict", conflict.code());
        assertEquals(2, conflict.serverVersion());
        assertArrayEquals(SyncTestClient.todo("row-1", list, "v2 by a", false, 1), conflict.serverRow());
        assertTrue(serverRows("it-syncflow", list).stream().noneMatch(r -> r.startsWith("row-sibling")));

        // The rejection is stored: a replay answers the same rejection, byte for byte.
        PushResult replay = pushResults(b.round(List.of(stale))).get(0);
        assertEquals(PushResult.Status.REJECTED, replay.status());
        assertArrayEquals(conflict.serverRow(), ((PushResult.Conflict) replay.results().get(0)).serverRow());
    }

    @Test
    void aRetryAfterADroppedResponseIsCachedWithoutASecondCommit() throws Exception {
        String list = "retry-" + UUID.randomUUID();
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-a-" + list, list);
        PushCommit commit = a.upsert("row-r", "once", null);
        PushResult applied = pushResults(a.round(List.of(commit))).get(0);
        PushResult again = pushResults(a.round(List.of(commit))).get(0);
        assertEquals(PushResult.Status.APPLIED, applied.status());
        assertEquals(PushResult.Status.CACHED, again.status());
        assertEquals(applied.commitSeq(), again.commitSeq());
        assertEquals(List.of("row-r@1:once"), serverRows("it-syncflow", list));
    }

    @Test
    void aWireV2RequestWithoutEpochAcquiresIt() throws Exception {
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-epoch", "epoch");
        ResponseMessage r = a.send(new RequestMessage(2, List.of(new ReqHeader("client-epoch", 1, null),
                new syncular.jakarta.wire.PullHeader(0, 0, 0, 3), a.subscription())));
        assertEquals(2, r.wireVersion());
        RespHeader h = assertInstanceOf(RespHeader.class, r.frames().get(0));
        assertTrue(h.resetRequired());
        assertTrue(h.logEpoch() != null && !h.logEpoch().isEmpty());
        assertEquals(1, r.frames().size());
        ResponseMessage served = a.send(new RequestMessage(2, List.of(new ReqHeader("client-epoch", 1, h.logEpoch()),
                new syncular.jakarta.wire.PullHeader(0, 0, 0, 3), a.subscription())));
        assertInstanceOf(SubStart.class, served.frames().get(1));
    }

    @Test
    void anUnservedSchemaVersionGetsTheSchemaFloor() throws Exception {
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-floor", "floor");
        ResponseMessage r = a.send(new RequestMessage(1, List.of(new ReqHeader("client-floor", 7),
                new syncular.jakarta.wire.PullHeader(0, 0, 0, 3), a.subscription())));
        RespHeader h = assertInstanceOf(RespHeader.class, r.frames().get(0));
        assertEquals(1, h.requiredSchemaVersion());
        assertEquals(1, h.latestSchemaVersion());
        assertEquals(1, r.frames().size());
    }

    @Test
    void badRequestsGetCatalogJson() throws Exception {
        SyncTestClient a = new SyncTestClient(base.toURI(), "client-bad", "bad");
        HttpResponse<byte[]> garbage = a.post(new byte[] {1, 2, 3}, false);
        assertEquals(400, garbage.statusCode());
        String body = new String(garbage.body());
        assertTrue(body.contains("\"code\":\"sync.invalid_request\"") && body.contains("\"category\":\"invalid-request\"")
                && body.contains("\"recommendedAction\":\"fixRequest\""), body);

        HttpResponse<String> wrongType = It.postBody(base.toURI().resolve("sync"), "text/plain", "hello");
        assertEquals(415, wrongType.statusCode());
        assertTrue(wrongType.body().contains("\"code\":\"sync.invalid_request\""), wrongType.body());
        HttpResponse<String> get = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(base.toURI().resolve("sync")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, get.statusCode());
        assertTrue(get.headers().firstValue("Allow").orElse("").contains("POST"), get.headers().toString());
        assertTrue(get.body().contains("\"code\":\"sync.invalid_request\""), get.body());
        HttpResponse<String> options = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(base.toURI().resolve("sync"))
                        .method("OPTIONS", java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, options.statusCode());
        assertEquals("POST, OPTIONS", options.headers().firstValue("Allow").orElse(""));

        ResponseMessage unknown;
        try {
            unknown = a.send(new RequestMessage(1, List.of(new ReqHeader("client-bad", 1),
                    new syncular.jakarta.wire.PullHeader(0, 0, 0, 3),
                    new syncular.jakarta.wire.Subscription("s", "nope", Map.of(), null, -1, null))));
            throw new AssertionError("expected 400, got " + unknown);
        } catch (AssertionError e) {
            assertTrue(e.getMessage().contains("HTTP 400") && e.getMessage().contains("sync.unknown_table"), e.getMessage());
        }
    }

    @Test
    void browsersOnAnAllowedOriginGetCorsHeadersAndOthersNone() throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI sync = base.toURI().resolve("sync");
        HttpResponse<String> preflight = http.send(java.net.http.HttpRequest.newBuilder(sync)
                .method("OPTIONS", java.net.http.HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://app.example").header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization, content-type").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(204, preflight.statusCode());
        assertEquals("https://app.example", preflight.headers().firstValue("Access-Control-Allow-Origin").orElse(""));
        String allowed = preflight.headers().firstValue("Access-Control-Allow-Headers").orElse("");
        assertTrue(allowed.contains("Authorization") && allowed.contains("Content-Type")
                && allowed.contains("X-Syncular-Scopes"), allowed);
        HttpResponse<String> post = http.send(java.net.http.HttpRequest.newBuilder(sync)
                .header("Origin", "https://app.example").header("Content-Type", "text/plain")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals("https://app.example", post.headers().firstValue("Access-Control-Allow-Origin").orElse(""));
        HttpResponse<String> other = http.send(java.net.http.HttpRequest.newBuilder(sync)
                .header("Origin", "https://evil.example").header("Content-Type", "text/plain")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(other.headers().firstValue("Access-Control-Allow-Origin").isEmpty());
    }

    static List<PushResult> pushResults(ResponseMessage m) {
        List<PushResult> out = new ArrayList<>();
        for (ResponseFrame f : m.frames()) if (f instanceof PushResult p) out.add(p);
        return out;
    }

    /** The server's rows of one list, straight from the projection table. */
    static List<String> serverRows(String partition, String list) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement(
                "SELECT id, _sync_server_version, title FROM todos WHERE _sync_partition = ? AND list_id = ? ORDER BY id COLLATE \"C\"")) {
            ps.setString(1, partition);
            ps.setString(2, list);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1) + "@" + rs.getLong(2) + ":" + rs.getString(3));
            }
        }
        return out;
    }
}

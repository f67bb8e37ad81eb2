package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubStart;

/**
 * Issue 19: the conformance host's control-plane state lives in the database, so an external test can {@code kill -9}
 * the server and go on. A Payara Micro process in conformance-host mode is reset, given grants, a validator and a
 * clock offset, and synced by two clients; it is killed mid-life and a new process starts on the same database. The
 * same clients then continue from their cursors (no revocation, no reset, no data vanishing), the grants, clock and
 * validator are what they were, and both replicas converge with the server's rows.
 */
@Timeout(600)
class ConformanceHostRestartMicroIT extends DatabaseIsolation {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final String PARTITION = "it-host-restart";
    private static MicroNode node;

    @AfterAll
    static void stop() {
        if (node != null) node.close();
    }

    private static MicroNode startNode() {
        return MicroNode.start("host", It.war("host"), Map.of("syncular.conformance-host", "true"));
    }

    private static HttpResponse<String> control(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(node.base().resolve("__conformance/" + path))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), () -> method + " " + path + ": " + r.body());
        return r;
    }

    private static String demoSchema() throws Exception {
        try (InputStream in = ConformanceHostRestartMicroIT.class.getClassLoader()
                .getResourceAsStream("syncular/demo/syncular.ir.json")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static PushResult.Status pushed(ResponseMessage m) {
        return m.frames().stream().filter(f -> f instanceof PushResult).map(f -> ((PushResult) f).status())
                .findFirst().orElseThrow();
    }

    private static SubStart.Status subscription(ResponseMessage m) {
        return m.frames().stream().filter(f -> f instanceof SubStart).map(f -> ((SubStart) f).status())
                .findFirst().orElseThrow();
    }

    @Test
    void aKilledHostRestartsOnItsDatabaseAndTheSameClientsCarryOnAndConverge() throws Exception {
        node = startNode();
        control("POST", "reset", "{\"schema\":" + demoSchema() + ",\"partition\":\"" + PARTITION
                + "\",\"nowMs\":1782993600000}");
        control("PUT", "actors/alice/allowed", "{\"list_id\":[\"L1\"]}");
        control("PUT", "actors/bob/allowed", "{\"list_id\":[\"L1\"]}");
        control("POST", "validators", "[{\"table\":\"todos\",\"rule\":{\"kind\":\"maxLength\",\"column\":\"title\","
                + "\"max\":20,\"code\":\"app.title_too_long\"}}]");
        long clock = Long.parseLong(control("POST", "clock/advance", "{\"ms\":5000}").body()
                .replaceAll("\\D", ""));

        SyncTestClient alice = new SyncTestClient(node.base(), "alice-phone", "L1", "alice");
        SyncTestClient bob = new SyncTestClient(node.base(), "bob-laptop", "L1", "bob");
        assertEquals(PushResult.Status.APPLIED, pushed(alice.round(List.of(alice.upsert("t1", "before", null)))));
        bob.round(List.of());
        assertEquals(List.of("t1@1:before"), bob.snapshot());
        long bobCursor = bob.cursor;

        node.kill();
        node = startNode();   // a new process on the same database (on another port)
        alice.reconnect(node.base());
        bob.reconnect(node.base());

        assertEquals("{\"nowMs\":" + clock + "}", control("GET", "clock", null).body(), "the virtual clock survived");
        ResponseMessage after = alice.round(List.of(alice.upsert("t2", "after", null)));
        assertEquals(PushResult.Status.APPLIED, pushed(after), "alice is still granted L1 in the same partition");
        assertEquals(SubStart.Status.ACTIVE, subscription(after), "her subscription was not revoked");
        ResponseMessage rejected = alice.round(List.of(alice.upsert("t3", "a title far too long to pass", null)));
        assertEquals(PushResult.Status.REJECTED, pushed(rejected), "the installed validator is still in force");

        ResponseMessage caughtUp = bob.round(List.of());
        assertEquals(SubStart.Status.ACTIVE, subscription(caughtUp));
        assertTrue(bob.cursor > bobCursor, "bob went on from his cursor");
        assertEquals(List.of("t1@1:before", "t2@1:after"), bob.snapshot(), "nothing vanished, nothing was missed");
        assertEquals(bob.snapshot(), alice.snapshot(), "both replicas converge");
        String rows = control("GET", "tables/todos/rows", null).body();
        assertTrue(rows.contains("\"rowId\":\"t1\"") && rows.contains("\"rowId\":\"t2\"")
                && !rows.contains("\"rowId\":\"t3\""), rows);
    }
}

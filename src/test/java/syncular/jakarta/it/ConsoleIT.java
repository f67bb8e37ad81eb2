package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.PushCommit;

/**
 * The operator console's JSON API (issue 20) on both servers, read through JPA (EclipseLink on Payara, Hibernate on
 * WildFly) over what real clients did: partitions, clients with lag, commits, one row, scope activity, rates; and
 * the actions, each refused without the CSRF token, audited when taken, and doing what they say (a prune moves the
 * horizon, a disconnect closes the client's socket).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ConsoleIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("console"), Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "console-user", "syncular.auth.fixed.allowed-scopes", "*"));
    }

    private static final String[] PLAIN = {"Authorization", "Basic " + java.util.Base64.getEncoder()
            .encodeToString("plain1:Pl41n!pass".getBytes(StandardCharsets.UTF_8))};
    private static final String PARTITION = "default";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private URI at(String path) throws Exception { return base.toURI().resolve("admin/console/" + path); }

    private Map<?, ?> get(String path) throws Exception {
        HttpResponse<String> r = It.get(at(path), It.ADMIN);
        assertEquals(200, r.statusCode(), () -> path + ": " + r.body());
        return (Map<?, ?>) Json.parse(r.body());
    }

    private static List<Map<?, ?>> list(Object o) {
        List<Map<?, ?>> out = new ArrayList<>();
        for (Object e : (List<?>) o) out.add((Map<?, ?>) e);
        return out;
    }

    private static long num(Object o) { return ((Number) o).longValue(); }

    /** A POST with the admin login and, unless null, the CSRF cookie and header (and an Origin, unless null). */
    private HttpResponse<String> post(String path, String cookie, String header, String origin) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(at(path)).timeout(Duration.ofSeconds(30))
                .header(It.ADMIN[0], It.ADMIN[1]).POST(HttpRequest.BodyPublishers.noBody());
        if (cookie != null) b.header("Cookie", "syncular-csrf=" + cookie);
        if (header != null) b.header("X-Syncular-CSRF", header);
        if (origin != null) b.header("Origin", origin);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The token of {@code GET session}, checked against the cookie it set. */
    private String csrfToken() throws Exception {
        HttpResponse<String> r = It.get(at("session"), It.ADMIN);
        assertEquals(200, r.statusCode(), r.body());
        String token = (String) ((Map<?, ?>) Json.parse(r.body())).get("csrfToken");
        String cookie = r.headers().firstValue("Set-Cookie").orElseThrow();
        assertTrue(cookie.startsWith("syncular-csrf=" + token + ";") && cookie.contains("SameSite=Strict")
                && cookie.contains("HttpOnly"), cookie);
        assertEquals("admin1", ((Map<?, ?>) Json.parse(r.body())).get("operator"));
        return token;
    }

    @Test
    void theConsoleIs401WithoutCredentialsAnd403WithoutTheRole() throws Exception {
        for (String path : List.of("overview", "partitions/default/clients", "audit", "session")) {
            assertEquals(401, It.get(at(path)).statusCode(), path);
            assertEquals(403, It.get(at(path), PLAIN).statusCode(), path);
        }
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(at("partitions/default/prune"))
                .header(PLAIN[0], PLAIN[1]).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(403, r.statusCode(), r.body());
    }

    @Test
    void anOperatorSeesPartitionsClientsWithLagCommitsARowAndScopes() throws Exception {
        SyncTestClient behind = new SyncTestClient(base.toURI(), "con-behind", "L-con");
        behind.round(List.of());
        SyncTestClient writer = new SyncTestClient(base.toURI(), "con-writer", "L-con");
        for (int i = 0; i < 5; i++) writer.round(List.of(writer.upsert("row-" + i, "title " + i, null)));
        writer.round(List.of(writer.upsert("row-0", "edited", 1L)));

        Map<?, ?> overview = get("overview");
        assertEquals(true, ((Map<?, ?>) overview.get("node")).get("ready"));
        Map<?, ?> partition = list(overview.get("partitions")).stream()
                .filter(p -> PARTITION.equals(p.get("partition"))).findFirst().orElseThrow();
        long head = num(partition.get("maxCommitSeq"));
        assertTrue(head >= 6, partition::toString);
        assertTrue(num(partition.get("knownClients")) >= 2, partition::toString);
        assertTrue(partition.containsKey("pruneRecommendation") && partition.get("logEpoch") != null, partition::toString);

        Map<?, ?> clients = get("partitions/default/clients");
        Map<?, ?> lagging = list(clients.get("clients")).stream().filter(c -> "con-behind".equals(c.get("clientId")))
                .findFirst().orElseThrow();
        assertEquals(num(lagging.get("cursor")) < 0 ? head : head - num(lagging.get("cursor")),
                num(lagging.get("lag")));
        assertTrue(num(lagging.get("lag")) >= 6, lagging::toString);
        Map<?, ?> current = get("partitions/default/clients/con-writer");
        assertEquals(0L, num(current.get("lag")), current::toString);
        assertEquals("console-user", current.get("actorId"));
        assertEquals(1, list(current.get("subscriptions")).size());
        assertTrue(list(current.get("recentEvents")).stream().anyMatch(e -> "push.applied".equals(e.get("type"))),
                current::toString);

        List<Map<?, ?>> commits = list(get("partitions/default/commits?limit=6").get("commits"));
        assertEquals(6, commits.size());
        assertEquals(head, num(commits.get(0).get("commitSeq")), "newest first");
        assertEquals("con-writer-c6", commits.get(0).get("clientCommitId"));
        assertEquals(Map.of("todos", 1L), Map.of("todos", num(((Map<?, ?>) commits.get(0).get("changesByTable")).get("todos"))));
        Map<?, ?> commit = get("partitions/default/commits/" + head);
        Map<?, ?> change = list(commit.get("changes")).get(0);
        assertEquals("row-0", change.get("rowId"));
        assertEquals("upsert", change.get("op"));
        assertEquals(2L, num(change.get("rowVersion")));

        Map<?, ?> row = get("partitions/default/rows/todos/row-0");
        assertEquals(true, row.get("exists"));
        assertEquals(2L, num(row.get("version")));
        assertEquals("edited", ((Map<?, ?>) row.get("values")).get("title"));
        assertEquals(Map.of("list_id", "L-con"), row.get("scopes"));
        assertEquals(2, list(row.get("history")).size());
        assertEquals(404, It.get(at("partitions/default/rows/todos/never"), It.ADMIN).statusCode());
        assertEquals(404, It.get(at("partitions/default/rows/nosuch/row-0"), It.ADMIN).statusCode());

        Map<?, ?> scope = list(get("partitions/default/scopes").get("scopes")).stream()
                .filter(s -> "L-con".equals(s.get("value"))).findFirst().orElseThrow();
        assertEquals(6L, num(scope.get("commits")));
        assertEquals(head, num(scope.get("lastCommitSeq")));

        Map<?, ?> totals = (Map<?, ?>) get("metrics?window=600").get("totals");
        assertTrue(num(totals.get("pushesApplied")) >= 6, totals::toString);
        assertEquals(400, It.get(at("metrics?window=0"), It.ADMIN).statusCode());
        assertEquals(400, It.get(at("partitions/default/clients?limit=0"), It.ADMIN).statusCode());
        assertEquals(404, It.get(at("partitions/nosuch/clients"), It.ADMIN).statusCode());
    }

    @Test
    void anActionWithoutTheCsrfTokenIsRefusedAndNothingChanges() throws Exception {
        String token = csrfToken();
        HttpResponse<String> none = post("partitions/default/prune", null, null, null);
        assertEquals(403, none.statusCode(), none.body());
        assertEquals("sync.forbidden", ((Map<?, ?>) Json.parse(none.body())).get("code"));
        assertTrue(none.body().contains("csrf"), none.body());
        assertEquals(403, post("partitions/default/prune", token, "x".repeat(token.length()), null).statusCode(),
                "a header that is not the cookie's token");
        assertEquals(403, post("partitions/default/prune", null, token, null).statusCode(), "no cookie");
        assertEquals(403, post("partitions/default/prune", token, token, "https://evil.example").statusCode(),
                "another origin");
        assertTrue(list(get("audit").get("actions")).stream().noneMatch(a -> "prune".equals(a.get("action"))
                && "admin1".equals(a.get("operator")) && "ok".equals(a.get("outcome"))), "nothing was done");
    }

    @Test
    void aBackfillActionOnACheckpointThatIsNotPendingIs404AndAuditedAsFailed() throws Exception {
        String token = csrfToken();
        for (String action : List.of("pause", "resume", "retry")) {
            HttpResponse<String> r = post("partitions/default/checkpoints/nosuch/" + action, token, token, null);
            assertEquals(404, r.statusCode(), r.body());
            assertEquals("sync.not_found", ((Map<?, ?>) Json.parse(r.body())).get("code"));
        }
        Map<?, ?> newest = list(get("audit").get("actions")).get(0);
        assertEquals(List.of("retry-backfill", "nosuch", "failed"), List.of(newest.get("action"), newest.get("target"),
                newest.get("outcome")));
        assertTrue(((String) newest.get("detail")).startsWith("sync.not_found"), newest::toString);
    }

    @Test
    void anOperatorPrunesAPartitionAndDisconnectsAClientAndBothAreAudited() throws Exception {
        SyncTestClient writer = new SyncTestClient(base.toURI(), "con-pruner", "L-prune");
        // more commits than the retained minimum (1,000, the SPEC §4.6 floor), then every client catches up
        for (int batch = 0; batch < 21; batch++) {
            List<PushCommit> commits = new ArrayList<>();
            for (int i = 0; i < 50; i++) commits.add(writer.upsert("p-" + batch + "-" + i, "for the log", null));
            writer.round(commits);
        }
        for (Map<?, ?> c : list(get("partitions/default/clients?limit=1000").get("clients"))) {
            // a list with no rows: its pull records the log head as the client's cursor
            new SyncTestClient(base.toURI(), (String) c.get("clientId"), "L-empty").round(List.of());
        }
        Map<?, ?> before = list(get("partitions").get("partitions")).stream()
                .filter(p -> PARTITION.equals(p.get("partition"))).findFirst().orElseThrow();
        long recommended = num(((Map<?, ?>) before.get("pruneRecommendation")).get("targetHorizonSeq"));
        assertTrue(recommended > num(before.get("horizonSeq")), before::toString);

        String token = csrfToken();
        HttpResponse<String> pruned = post("partitions/default/prune", token, token, base.toURI().getScheme() + "://"
                + base.getHost() + ":" + base.getPort());
        assertEquals(200, pruned.statusCode(), pruned.body());
        Map<?, ?> result = (Map<?, ?>) Json.parse(pruned.body());
        assertEquals(recommended, num(result.get("horizonSeq")), "the horizon moved where the console said");
        assertTrue(num(result.get("removedCommits")) > 0, result::toString);
        Map<?, ?> after = list(get("partitions").get("partitions")).stream()
                .filter(p -> PARTITION.equals(p.get("partition"))).findFirst().orElseThrow();
        assertEquals(recommended, num(after.get("horizonSeq")));

        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=con-pruner")) {
            socket.nextEvent(10);
            // the hello is queued before the session joins its partition: the socket.opened event says it has
            for (int attempt = 0; !It.get(base.toURI().resolve("admin/events?type=socket.opened&clientId=con-pruner"),
                    It.ADMIN).body().contains("socket.opened"); attempt++) {
                assertTrue(attempt < 100, "the socket never joined its partition");
                Thread.sleep(50);
            }
            HttpResponse<String> kicked = post("partitions/default/clients/con-pruner/disconnect", token, token, null);
            assertEquals(200, kicked.statusCode(), kicked.body());
            assertEquals(1L, num(((Map<?, ?>) Json.parse(kicked.body())).get("closedSockets")));
            assertTrue(socket.awaitClose(15).startsWith("1012"), "closed as a restart: the client reconnects");
        }

        List<Map<?, ?>> audit = list(get("audit").get("actions"));
        Map<?, ?> newest = audit.get(0);
        assertEquals(List.of("disconnect", "admin1", "default", "con-pruner", "ok"), List.of(newest.get("action"),
                newest.get("operator"), newest.get("partition"), newest.get("target"), newest.get("outcome")));
        Map<?, ?> prune = audit.get(1);
        assertEquals(List.of("prune", "admin1", "ok"), List.of(prune.get("action"), prune.get("operator"),
                prune.get("outcome")));
        assertTrue(((String) prune.get("detail")).contains("\"horizonSeq\":" + recommended), prune::toString);
        HttpResponse<String> events = It.get(base.toURI().resolve("admin/events?type=prune.completed"), It.ADMIN);
        assertTrue(events.body().contains("\"trigger\":\"operator\""), events.body());
    }
}

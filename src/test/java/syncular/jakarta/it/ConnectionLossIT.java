package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;

/**
 * The pool survives the loss of its connections: every pooled backend of the WAR is terminated
 * ({@code pg_terminate_backend}, what a PostgreSQL restart, a fail-over or an idle-connection reaper does to a pool),
 * and the very next requests are served — the pool validates a connection before handing it out and drops the dead
 * ones instead of failing every request with "This connection has been closed".
 *
 * <p>On Payara this is the WAR's own {@code @DataSourceDefinition} (its {@code fish.payara.*} validation
 * properties). On WildFly a deployment-defined datasource cannot carry validation or an exception sorter at all, so
 * production deployments there use a container datasource (README, WildFly option 2): the test deploys against
 * {@code java:jboss/datasources/SyncularPG}, which {@code src/test/servers/prepare.sh} defines exactly as the README
 * does.
 */
@ExtendWith(ArquillianExtension.class)
class ConnectionLossIT extends DatabaseIsolation {
    static final String PARTITION = "it-connloss";

    @Deployment(testable = false)
    static WebArchive deployment() {
        Map<String, String> config = new java.util.TreeMap<>(Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*"));
        if (It.isWildFly()) {
            config.put("syncular.datasource", "java:jboss/datasources/SyncularPG");
            // no URL of its own: the realtime commit feed takes its LISTEN connection from the container pool,
            // whose driver is the server's module, not the WAR's copy (jboss-deployment-structure.xml)
            config.put("syncular.db.url", "");
        }
        return It.withConfig(It.war("connloss"), config);
    }

    @ArquillianResource
    URL base;

    static int terminatePool() throws Exception {
        try (Connection c = It.jdbc(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE application_name = 'syncular' AND pid <> pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void requestsAreServedRightAfterEveryPooledConnectionWasTerminated() throws Exception {
        URI root = base.toURI();
        It.await(root.resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        SyncTestClient client = new SyncTestClient(root, "connloss-a", "list-connloss");
        // several rounds in parallel-ish succession so the pool holds more than one connection
        for (int i = 0; i < 5; i++) client.round(List.of(client.upsert("todo-" + i, "before " + i, null)));

        for (int loss = 0; loss < 3; loss++) {
            assertTrue(terminatePool() > 0, "the WAR had pooled connections to terminate");
            // the very next request: the pool must not hand out a terminated connection
            RequestMessage request = new RequestMessage(1, List.of(
                    new syncular.jakarta.wire.ReqHeader(client.clientId, 1),
                    client.upsert("todo-after-" + loss, "after " + loss, null)));
            HttpResponse<byte[]> r = client.post(RequestEncoder.encode(request), false);
            assertEquals(200, r.statusCode(), () -> "after losing the pool: " + new String(r.body()));
            ResponseMessage m = syncular.jakarta.wire.ResponseDecoder.decode(r.body());
            PushResult result = m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast)
                    .findFirst().orElseThrow();
            assertEquals(PushResult.Status.APPLIED, result.status());
            HttpResponse<String> ready = It.get(root.resolve("health/ready"));
            assertEquals(200, ready.statusCode(), ready.body());
        }
        client.round(List.of());
        assertEquals(8, client.replica.size(), "every write before and after the losses is stored once");

        // the realtime commit feed lost its connection too (on WildFly it is a pooled one) and listens again
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(root, "clientId=" + client.clientId)) {
            assertEquals("hello", socket.nextEvent(10).get("event"));
            SyncTestClient writer = new SyncTestClient(root, "connloss-writer", "list-connloss");
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
            ResponseMessage delta = null;
            for (int i = 0; delta == null && System.nanoTime() < deadline; i++) {
                writer.round(List.of(writer.upsert("rt-" + i, "realtime " + i, null)));
                try {
                    delta = socket.nextDelta(3);
                } catch (AssertionError notYet) {
                    // the feed may still be reconnecting (backoff); the next commit is notified once it listens
                }
            }
            assertTrue(delta != null, "a commit reaches the socket once the feed listens again");
        }
    }
}

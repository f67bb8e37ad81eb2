package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Realtime in conformance-host mode: authentication on upgrade through the same Authenticator as {@code /sync}
 * (query parameter {@code actor}; a refusal closes with 1008 and the catalog code), hello stamped by the virtual
 * clock, and a reset that closes every socket.
 */
@ExtendWith(ArquillianExtension.class)
class RealtimeConformanceIT extends DatabaseIsolation {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final long NOW = 1_782_993_600_000L;

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("rtconformance"), Map.of("syncular.conformance-host", "true"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> reset = resetWith("");
        assertEquals(200, reset.statusCode(), reset.body());
    }

    private HttpResponse<String> resetWith(String extra) throws Exception {
        String body = "{\"schema\":" + ConformanceHostIT.TASKS_SCHEMA + ",\"partition\":\"rt-p\",\"nowMs\":" + NOW
                + extra + "}";
        URI uri = base.toURI().resolve("__conformance/reset");
        return HTTP.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anUnauthenticatedUpgradeIsClosedWithPolicyViolationAndTheCode() throws Exception {
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=c-anon")) {
            assertEquals("1008 sync.auth_required", socket.awaitClose(15));
        }
    }

    @Test
    void theUpgradeRequestsHeadersReachTheAuthenticator() throws Exception {
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=c-bob",
                "X-Syncular-Actor", "bob")) {
            Map<?, ?> hello = socket.nextEvent(10);
            assertEquals("bob", ((Map<?, ?>) hello.get("data")).get("actorId"));
        }
    }

    @Test
    void helloCarriesTheActorAndTheVirtualClockAndAResetClosesTheSocket() throws Exception {
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=c-alice&actor=alice")) {
            Map<?, ?> hello = socket.nextEvent(10);
            Map<?, ?> data = (Map<?, ?>) hello.get("data");
            assertEquals("hello", hello.get("event"));
            assertEquals("alice", data.get("actorId"));
            assertEquals(NOW, ((Number) data.get("timestamp")).longValue());
            assertEquals(-1L, ((Number) data.get("cursor")).longValue());
            assertEquals(true, data.get("requiresSync"));
            assertEquals(200, resetWith(",\"limits\":{\"maxDeltaBytes\":1}").statusCode());
            assertEquals("1012 reset", socket.awaitClose(15));
        }
    }
}

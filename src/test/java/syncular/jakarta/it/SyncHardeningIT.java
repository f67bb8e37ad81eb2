package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.migration.BackfillRunner;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 13 over the deployed WAR: the server-owned clientId namespaces are refused on {@code POST /sync} and on the
 * {@code clientId} query parameter of {@code GET /realtime} (item 6), and
 * {@code syncular.limits.max-subscriptions-per-request} refuses a longer subscription list (item 9a).
 */
@ExtendWith(ArquillianExtension.class)
class SyncHardeningIT extends DatabaseIsolation {
    static final String PARTITION = "it-hardening";
    static final int MAX_SUBSCRIPTIONS = 3;

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("hardening"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*",
                "syncular.limits.max-subscriptions-per-request", String.valueOf(MAX_SUBSCRIPTIONS)));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    @Test
    void aPushUnderTheBackfillRunnersClientIdIsRefused() throws Exception {
        String clientId = BackfillRunner.clientId("todos_v2");
        SyncTestClient c = new SyncTestClient(base.toURI(), clientId, "hardening-list");
        HttpResponse<byte[]> r = c.post(RequestEncoder.encode(new RequestMessage(1, List.of(
                new ReqHeader(clientId, 1), c.upsert("h1", "title", null)))), false);
        assertEquals(400, r.statusCode(), () -> new String(r.body()));
        assertTrue(new String(r.body()).contains("\"code\":\"sync.invalid_client_id\""), new String(r.body()));

        SyncTestClient ordinary = new SyncTestClient(base.toURI(), "hardening-ordinary", "hardening-list");
        assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class,
                ordinary.round(List.of(ordinary.upsert("h1", "title", null))).frames().get(1)).status());
    }

    @Test
    void aRealtimeSocketUnderAServerOwnedClientIdIsClosedWithTheCode() throws Exception {
        for (String clientId : List.of(BackfillRunner.clientId("todos_v2"), "[\"remote-command\",\"a\",\"b\"]")) {
            try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(),
                    "clientId=" + URLEncoder.encode(clientId, StandardCharsets.UTF_8))) {
                assertEquals("1008 sync.invalid_client_id", socket.awaitClose(15), clientId);
            }
        }
    }

    @Test
    void moreSubscriptionsThanTheConfiguredCapAreAnInvalidRequest() throws Exception {
        SyncTestClient c = new SyncTestClient(base.toURI(), "hardening-subs", "hardening-list");
        HttpResponse<byte[]> atCap = c.post(pull(c.clientId, MAX_SUBSCRIPTIONS), false);
        assertEquals(200, atCap.statusCode(), () -> new String(atCap.body()));
        assertEquals(MAX_SUBSCRIPTIONS, ResponseDecoder.decode(atCap.body()).frames().stream()
                .filter(f -> f instanceof syncular.jakarta.wire.SubEnd).count());
        HttpResponse<byte[]> over = c.post(pull(c.clientId, MAX_SUBSCRIPTIONS + 1), false);
        assertEquals(400, over.statusCode(), () -> new String(over.body()));
        assertTrue(new String(over.body()).contains("\"code\":\"sync.invalid_request\""), new String(over.body()));
    }

    private static byte[] pull(String clientId, int subscriptions) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        for (int i = 0; i < subscriptions; i++) {
            frames.add(new Subscription("s" + i, "todos", Map.of("list_id", List.of("hardening-" + i)), null, -1, null));
        }
        return RequestEncoder.encode(new RequestMessage(1, frames));
    }
}

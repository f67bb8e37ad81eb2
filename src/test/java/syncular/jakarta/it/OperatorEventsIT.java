package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.events.PrometheusText;
import syncular.jakarta.wire.Json;

/**
 * The operator's events and metrics (issue 20) on both servers: {@code admin/events} (the ring), its live SSE tail
 * {@code admin/events/stream} with {@code Last-Event-ID} resume, and {@code /metrics} as Prometheus text — each 401
 * without credentials, 403 without the role, and counting exactly what real clients did.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class OperatorEventsIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("events"), Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "ops-user", "syncular.auth.fixed.allowed-scopes", "*"));
    }

    private static final String[] PLAIN = {"Authorization", "Basic " + java.util.Base64.getEncoder()
            .encodeToString("plain1:Pl41n!pass".getBytes(StandardCharsets.UTF_8))};

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private URI at(String path) throws Exception { return base.toURI().resolve(path); }

    @Test
    void everyOperatorRouteIs401WithoutCredentialsAnd403WithoutTheRole() throws Exception {
        for (String path : List.of("metrics", "admin/events", "admin/events/stream")) {
            assertEquals(401, It.get(at(path)).statusCode(), path);
            assertEquals(403, It.get(at(path), PLAIN).statusCode(), path);
        }
    }

    @Test
    void theMetricsCountExactlyThePushesClientsMadeAsPrometheusText() throws Exception {
        Map<String, Double> before = scrape();
        SyncTestClient client = new SyncTestClient(base.toURI(), "ops-metrics", "L-metrics");
        for (int i = 0; i < 3; i++) client.round(List.of(client.upsert("m" + i, "counted", null)));
        client.round(List.of(client.upsert("m0", "stale base", 0L)));   // a lost insert race: a conflict
        Map<String, Double> after = scrape();
        assertEquals(3.0, delta(before, after, "syncular_pushes_total{outcome=\"applied\"}"));
        assertEquals(1.0, delta(before, after, "syncular_pushes_total{outcome=\"conflicted\"}"));
        assertEquals(4.0, delta(before, after, "syncular_requests_seconds_count{outcome=\"ok\",transport=\"http\"}"));
        assertEquals(4.0, delta(before, after, "syncular_pulls_total"));
        assertEquals(1.0, after.get("syncular_ready"));
        assertTrue(delta(before, after, "syncular_pool_wait_seconds_count") >= 4, "each request checked a "
                + "connection out of the container's pool, timed");
    }

    @Test
    void theRingAnswersAClientsPushesAndSocketInOrder() throws Exception {
        SyncTestClient client = new SyncTestClient(base.toURI(), "ops-ring", "L-ring");
        client.round(List.of(client.upsert("r1", "one", null)));
        client.round(List.of(client.upsert("r2", "two", null)));
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=ops-ring")) {
            socket.nextEvent(10);
        }
        List<Map<?, ?>> pushes = events("admin/events?type=push.applied&clientId=ops-ring");
        assertEquals(2, pushes.size(), pushes::toString);
        assertTrue(((Number) pushes.get(0).get("commitSeq")).longValue()
                < ((Number) pushes.get(1).get("commitSeq")).longValue(), "oldest first");
        assertEquals("ops-user", pushes.get(0).get("actorId"));
        // a prefix filter, and the socket's close reaches the ring once the server saw it
        List<Map<?, ?>> socket = events("admin/events?type=socket.&clientId=ops-ring");
        for (int attempt = 0; socket.size() < 2 && attempt < 100; attempt++) {
            Thread.sleep(100);
            socket = events("admin/events?type=socket.&clientId=ops-ring");
        }
        assertEquals(List.of("socket.opened", "socket.closed"), socket.stream().map(e -> e.get("type")).toList());
        assertEquals(400, It.get(at("admin/events?limit=0"), It.ADMIN).statusCode());
    }

    @Test
    void theLiveTailShowsAPushedCommitAndResumesFromLastEventId() throws Exception {
        SyncTestClient client = new SyncTestClient(base.toURI(), "ops-tail", "L-tail");
        long seq;
        try (Tail tail = Tail.open(at("admin/events/stream?type=push.&clientId=ops-tail"), null)) {
            client.round(List.of(client.upsert("t1", "live", null)));
            Tail.Event e = tail.next();
            assertEquals("push.applied", e.name());
            assertEquals("ops-tail", Json.parse(e.data()) instanceof Map<?, ?> m ? m.get("clientId") : null);
            seq = Long.parseLong(e.id());
        }
        client.round(List.of(client.upsert("t2", "while the tail was away", null)));
        try (Tail again = Tail.open(at("admin/events/stream?type=push.&clientId=ops-tail"), Long.toString(seq))) {
            Tail.Event missed = again.next();
            assertTrue(missed.data().contains("\"operations\":1"), missed.data());
            assertTrue(Long.parseLong(missed.id()) > seq, "resumed after the last event it had");
        }
    }

    /**
     * A Last-Event-ID this stream never sent is refused before a byte of the stream, as 400 with the stable code (an
     * EventSource stops reconnecting on it), not an empty stream it would reconnect to forever.
     */
    @Test
    void aLastEventIdThatIsNoSequenceNumberIs400BeforeTheStream() throws Exception {
        HttpResponse<String> r = It.get(at("admin/events/stream"), It.ADMIN[0], It.ADMIN[1],
                "Accept", "text/event-stream", "Last-Event-ID", "not-a-seq");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("sync.invalid_request", ((Map<?, ?>) Json.parse(r.body())).get("code"), r.body());
    }

    private Map<String, Double> scrape() throws Exception {
        HttpResponse<String> r = It.get(at("metrics"), It.ADMIN);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"), r.toString());
        return PrometheusText.parse(r.body());
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after, String sample) {
        assertTrue(after.containsKey(sample), () -> sample + " missing from " + after.keySet());
        return after.get(sample) - before.getOrDefault(sample, 0.0);
    }

    private List<Map<?, ?>> events(String path) throws Exception {
        HttpResponse<String> r = It.get(at(path), It.ADMIN);
        assertEquals(200, r.statusCode(), r.body());
        List<Map<?, ?>> out = new ArrayList<>();
        for (Object o : (List<?>) ((Map<?, ?>) Json.parse(r.body())).get("events")) out.add((Map<?, ?>) o);
        return out;
    }

    /** A Server-Sent Events client over java.net.http, reading on its own thread. */
    static final class Tail implements AutoCloseable {
        record Event(String id, String name, String data) { }

        private final BlockingQueue<Event> events = new ArrayBlockingQueue<>(256);
        private final InputStream body;

        private Tail(InputStream body) {
            this.body = body;
            Thread reader = new Thread(this::read, "sse-tail");
            reader.setDaemon(true);
            reader.start();
        }

        static Tail open(URI uri, String lastEventId) throws Exception {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).header("Accept", "text/event-stream")
                    .header(It.ADMIN[0], It.ADMIN[1]);
            if (lastEventId != null) b.header("Last-Event-ID", lastEventId);
            HttpResponse<InputStream> r = HttpClient.newHttpClient().send(b.build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, r.statusCode());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"),
                    r.headers().toString());
            return new Tail(r.body());
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
                String id = null;
                String name = null;
                StringBuilder data = new StringBuilder();
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.isEmpty()) {
                        if (name != null || data.length() > 0) events.put(new Event(id, name, data.toString()));
                        id = null;
                        name = null;
                        data.setLength(0);
                    } else if (line.startsWith("id:")) {
                        id = line.substring(3).trim();
                    } else if (line.startsWith("event:")) {
                        name = line.substring(6).trim();
                    } else if (line.startsWith("data:")) {
                        if (data.length() > 0) data.append('\n');
                        data.append(line.substring(5).trim());
                    }
                }
            } catch (Exception e) {
                // closed by the test
            }
        }

        Event next() throws InterruptedException {
            Event e = events.poll(20, TimeUnit.SECONDS);
            if (e == null) throw new AssertionError("no event on the tail within 20 s");
            return e;
        }

        @Override
        public void close() throws Exception { body.close(); }
    }
}

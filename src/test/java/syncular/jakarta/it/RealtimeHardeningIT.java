package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 13, realtime: the WebSocket channel under hostile or careless clients in {@code jwt} mode — every socket
 * authenticates with its own upgrade's token even when hundreds of upgrades share one query string, a socket closes
 * when its token lapses, browsers authenticate through {@code Sec-WebSocket-Protocol} and are held to the allowed
 * origins, a dead peer is closed by the idle timeout while a live one that only hears heartbeats stays, and the
 * per-actor connection cap and the presence rate close with 1013 and their catalog codes.
 */
@ExtendWith(ArquillianExtension.class)
class RealtimeHardeningIT extends DatabaseIsolation {
    private static final String SECRET = JwtAuthIT.SECRET;
    private static final int PER_ACTOR = 120;

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("rt-hardening"), Map.of(
                "syncular.auth.mode", "jwt",
                "syncular.auth.jwt.hs256-secret", SECRET,
                "syncular.cors.allowed-origins", "https://app.example",
                "syncular.realtime.heartbeat-ms", "1000",
                "syncular.realtime.idle-timeout-ms", "3000",
                "syncular.realtime.max-connections-per-actor", String.valueOf(PER_ACTOR),
                "syncular.realtime.presence.max-per-second", "5"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private static String token(String actor, String partition, String list, long expMs) throws Exception {
        return JwtAuthIT.token(new JWTClaimsSet.Builder().subject(actor).claim("partition", partition)
                .claim("scopes", Map.of("list_id", List.of(list))).expirationTime(new Date(expMs)).build(), SECRET);
    }

    private static String token(String actor, String partition, String list) throws Exception {
        return token(actor, partition, list, System.currentTimeMillis() + 600_000);
    }

    private static Map<?, ?> data(Map<?, ?> event) { return (Map<?, ?>) event.get("data"); }

    /** A socket pull of {@code list}: ACTIVE when the socket's own token grants it, REVOKED otherwise (§3.2). */
    private static SubStart.Status pullStatus(RealtimeTestSocket s, String clientId, String list) throws Exception {
        byte[] request = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                new PullHeader(0, 0, 0, 3), new Subscription("s", "todos", Map.of("list_id", List.of(list)), null, -1,
                        null))));
        return assertInstanceOf(SubStart.class, ResponseDecoder.decode(s.round(request)).frames().get(1)).status();
    }

    @Test
    void concurrentUpgradesWithOneQueryStringEachAuthenticateWithTheirOwnToken() throws Exception {
        // two actors in two partitions (so both may use the one clientId), each granted only its own list
        String alice = token("alice", "rt-h-a", "list-alice");
        String bob = token("bob", "rt-h-b", "list-bob");
        int n = 200;
        ExecutorService pool = Executors.newFixedThreadPool(50);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<RealtimeTestSocket>> opened = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String t = i % 2 == 0 ? alice : bob;
            opened.add(pool.submit(() -> {
                start.await();
                return RealtimeTestSocket.open(base.toURI(), "clientId=shared-client", "Authorization", "Bearer " + t);
            }));
        }
        start.countDown();
        List<RealtimeTestSocket> sockets = new ArrayList<>();
        try {
            for (Future<RealtimeTestSocket> f : opened) sockets.add(f.get(60, TimeUnit.SECONDS));
            List<Future<String>> checks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RealtimeTestSocket s = sockets.get(i);
                String actor = i % 2 == 0 ? "alice" : "bob";
                int index = i;
                checks.add(pool.submit(() -> {
                    Map<?, ?> hello = s.nextEvent(30);
                    if (!"hello".equals(hello.get("event")) || !actor.equals(data(hello).get("actorId"))) {
                        return "socket " + index + " (" + actor + ") got " + hello;
                    }
                    SubStart.Status own = pullStatus(s, "shared-client", "list-" + actor);
                    if (own != SubStart.Status.ACTIVE) return "socket " + index + " (" + actor + ") own list " + own;
                    return null;
                }));
            }
            List<String> wrong = new ArrayList<>();
            for (Future<String> c : checks) {
                String w = c.get(120, TimeUnit.SECONDS);
                if (w != null) wrong.add(w);
            }
            assertEquals(List.of(), wrong, "every socket must speak as its own upgrade's actor");
        } finally {
            for (RealtimeTestSocket s : sockets) s.close();
            pool.shutdownNow();
        }
    }

    @Test
    void aSocketClosesWhenItsTokenLapses() throws Exception {
        // exp 2 s ago: still inside the authenticator's 5 s clock skew, so accepted for about 3 s more
        String lapsing = token("carol", "rt-h-c", "list-carol", System.currentTimeMillis() - 2_000);
        try (RealtimeTestSocket s = RealtimeTestSocket.open(base.toURI(), "clientId=lapsing",
                "Authorization", "Bearer " + lapsing)) {
            assertEquals("hello", s.nextEvent(10).get("event"));
            String close = s.awaitClose(30);
            // The server closes with 1008 sync.auth_required. Seen once on WildFly: the close frame lost to a TCP
            // reset (the client's pong to the 1 s heartbeat ping arriving as the server closed), so the client saw
            // 1006. Either way the server ended the socket at the lapse; a reconnect with the token says why.
            if (!close.equals("1008 sync.auth_required")) {
                assertEquals("1006 ", close);
                try (RealtimeTestSocket again = RealtimeTestSocket.open(base.toURI(), "clientId=lapsing",
                        "Authorization", "Bearer " + lapsing)) {
                    assertEquals("1008 sync.auth_required", again.awaitClose(30));
                }
            }
        }
        // the case: a token that expired 10 s ago never opens (and never writes over HTTP either)
        String lapsed = token("carol", "rt-h-c", "list-carol", System.currentTimeMillis() - 10_000);
        try (RealtimeTestSocket s = RealtimeTestSocket.open(base.toURI(), "clientId=lapsed",
                "Authorization", "Bearer " + lapsed)) {
            assertEquals("1008 sync.auth_required", s.awaitClose(30));
        }
    }

    @Test
    void aBrowserSendsItsTokenAsASubprotocolAndOnlyTheMarkerIsEchoed() throws Exception {
        String t = token("dave", "rt-h-d", "list-dave");
        RealtimeTestSocket s = new RealtimeTestSocket();
        URI uri = URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=browser");
        s.ws = HttpClient.newHttpClient().newWebSocketBuilder().header("Origin", "https://app.example")
                .subprotocols("syncular", "syncular.bearer." + t).buildAsync(uri, s).get(20, TimeUnit.SECONDS);
        try (s) {
            assertEquals("syncular", s.ws.getSubprotocol(), "RFC 6455: one offered value, never the token");
            Map<?, ?> hello = s.nextEvent(10);
            assertEquals("dave", data(hello).get("actorId"));
            assertEquals(SubStart.Status.ACTIVE, pullStatus(s, "browser", "list-dave"));
        }
        // the query carrier is off unless configured (query strings end up in access logs)
        try (RealtimeTestSocket q = RealtimeTestSocket.open(base.toURI(), "clientId=browser&access_token=" + t)) {
            assertEquals("1008 sync.auth_required", q.awaitClose(30));
        }
    }

    @Test
    void anUpgradeFromAnOriginThatIsNotAllowedIsRefused() throws Exception {
        String t = token("erin", "rt-h-e", "list-erin");
        URI uri = URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=origin");
        ExecutionException refused = assertThrows(ExecutionException.class, () -> HttpClient.newHttpClient()
                .newWebSocketBuilder().header("Origin", "https://evil.example")
                .header("Authorization", "Bearer " + t).buildAsync(uri, new RealtimeTestSocket())
                .get(20, TimeUnit.SECONDS));
        WebSocketHandshakeException handshake = assertInstanceOf(WebSocketHandshakeException.class,
                refused.getCause());
        assertEquals(403, handshake.getResponse().statusCode());
        try (RealtimeTestSocket ok = RealtimeTestSocket.open(base.toURI(), "clientId=origin",
                "Origin", "https://app.example", "Authorization", "Bearer " + t)) {
            assertEquals("hello", ok.nextEvent(10).get("event"));
        }
    }

    @Test
    void aPeerThatNeverAnswersIsClosedByTheIdleTimeoutWhileALiveOneStays() throws Exception {
        String t = token("frank", "rt-h-f", "list-frank");
        try (RealtimeTestSocket live = RealtimeTestSocket.open(base.toURI(), "clientId=live",
                "Authorization", "Bearer " + t);
             Socket dead = new Socket(base.getHost(), base.getPort())) {
            dead.setSoTimeout(30_000);
            OutputStream out = dead.getOutputStream();
            out.write(("GET " + base.getPath() + "realtime?clientId=dead HTTP/1.1\r\nHost: " + base.getHost() + ":"
                    + base.getPort() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    + "Authorization: Bearer " + t + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = dead.getInputStream();
            String status = readHead(in);
            assertTrue(status.startsWith("HTTP/1.1 101"), status);
            // read (never answering pings) until the server's close frame: the idle timeout is 3 s
            int code = awaitCloseFrame(in);
            assertEquals(1001, code);
            // the JDK client answered every ping; it only ever heard heartbeats and is still open
            assertEquals("hello", live.nextEvent(10).get("event"));
            live.expectSilence(500);
            assertFalse(live.closed.isDone(), () -> "closed: " + live.closed.getNow(""));
        }
    }

    @Test
    void theActorCapAndThePresenceRateCloseWith1013() throws Exception {
        String t = token("gina", "rt-h-g", "list-gina");
        List<RealtimeTestSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < PER_ACTOR; i++) {
                RealtimeTestSocket s = RealtimeTestSocket.open(base.toURI(), "clientId=cap", "Authorization",
                        "Bearer " + t);
                assertEquals("hello", s.nextEvent(10).get("event"));
                held.add(s);
            }
            try (RealtimeTestSocket over = RealtimeTestSocket.open(base.toURI(), "clientId=cap", "Authorization",
                    "Bearer " + t)) {
                assertEquals("1013 sync.websocket_connection_limit", over.awaitClose(30));
            }
            held.remove(0).close();
            // the slot is released when the server sees the close: a later connect gets in
            CompletableFuture<RealtimeTestSocket> again = new CompletableFuture<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!again.isDone() && System.nanoTime() < deadline) {
                RealtimeTestSocket s = RealtimeTestSocket.open(base.toURI(), "clientId=cap", "Authorization",
                        "Bearer " + t);
                Object first = s.messages.poll(10, TimeUnit.SECONDS);
                if (first instanceof String m && m.contains("\"hello\"")) {
                    again.complete(s);
                } else {
                    s.close();
                    Thread.sleep(100);
                }
            }
            RealtimeTestSocket presence = again.getNow(null);
            assertTrue(presence != null, "a released slot must admit a new socket");
            held.add(presence);
            // presence: 5 publishes a second per socket; a flood closes it. Each send is awaited: the JDK client
            // fails a send issued while the previous one is outstanding, so an unawaited loop may flood nothing
            for (int i = 0; i < 50 && !presence.closed.isDone(); i++) {
                try {
                    presence.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:x\",\"doc\":{}}}");
                } catch (ExecutionException closedWhileSending) {
                    break;   // the server closed first; the close code below is the verdict
                }
            }
            assertEquals("1013 sync.rate_limited", presence.awaitClose(30));
        } finally {
            for (RealtimeTestSocket s : held) s.close();
        }
    }

    private static String readHead(InputStream in) throws Exception {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) break;
            head.write(b);
            byte[] h = head.toByteArray();
            int n = h.length;
            if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') break;
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    /**
     * Reads server frames (unmasked) until a close frame; answers its status code (−1 at end of stream). Bounded:
     * heartbeats keep arriving from a server that never closes, so the wait ends at a deadline instead.
     */
    private static int awaitCloseFrame(InputStream in) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (System.nanoTime() > deadline) throw new AssertionError("the server did not close within 30 s");
            int b0 = in.read();
            int b1 = in.read();
            if (b0 < 0 || b1 < 0) return -1;
            long len = b1 & 0x7f;
            if (len == 126) len = (in.read() << 8) | in.read();
            else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++) len = (len << 8) | in.read();
            }
            byte[] payload = in.readNBytes((int) len);
            if ((b0 & 0x0f) == 0x8) return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : -1;
        }
    }
}

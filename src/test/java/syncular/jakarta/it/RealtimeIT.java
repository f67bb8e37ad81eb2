package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.sync.bench.PlainWebSocket;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * {@code GET /realtime} end to end on the deployed WAR with the JDK's WebSocket client (SPEC §8): hello, deltas
 * after commits filtered by registrations, acks advancing the cursor record, the §8.2 contiguity rule
 * (catchup-required, then deltas resume), delta-too-large, heartbeats, socket rounds byte-equal to HTTP (§8.7),
 * pipelining and unframed streams closing the socket, presence (§8.6), and the commit feed's reconnect.
 */
@ExtendWith(ArquillianExtension.class)
class RealtimeIT extends DatabaseIsolation {
    static final String PARTITION = "it-realtime";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("realtime"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*",
                "syncular.realtime.max-delta-bytes", "2048",
                "syncular.realtime.presence.max-bytes", "256",
                "syncular.realtime.heartbeat-ms", "1000",
                "syncular.realtime.max-message-bytes", "1048576"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private URI uri() throws Exception { return base.toURI(); }

    /** A client that has pulled its list once, so its record registers the subscription (§8.1). */
    private SyncTestClient pulled(String clientId, String list) throws Exception {
        SyncTestClient c = new SyncTestClient(uri(), clientId, list);
        c.round(List.of());
        return c;
    }

    private RealtimeTestSocket connect(String clientId) throws Exception {
        return RealtimeTestSocket.open(uri(), "clientId=" + clientId);
    }

    /**
     * Writes a row as {@code writer} until {@code socket} answers it with a delta, and answers that delta's commit.
     * The tests share one partition, so a commit of another test still landing (or of another list) can leave the
     * session behind at any point: §8.2 then sends a catch-up wake instead, and the client pulls and acks as a real
     * one does before the next write. Nothing here waits on a clock; the attempts are bounded.
     */
    private static CommitFrame liveDelta(RealtimeTestSocket socket, SyncTestClient reader, SyncTestClient writer,
                                         String rowPrefix) throws Exception {
        for (int attempt = 1; ; attempt++) {
            writer.round(List.of(writer.upsert(rowPrefix + attempt, "live", null)));
            Object m = socket.next(10);
            while (m instanceof String s && s.contains("\"heartbeat\"")) m = socket.next(10);
            if (m instanceof byte[] b && b[0] == syncular.jakarta.wire.RealtimeControl.TAG_DELTA) {
                ResponseMessage delta = ResponseDecoder.decode(java.util.Arrays.copyOfRange(b, 1, b.length));
                return assertInstanceOf(CommitFrame.class, delta.frames().get(2));
            }
            Object wake = m;
            assertEquals("catchup-required", data((Map<?, ?>) syncular.jakarta.wire.Json.parse((String) m)).get("reason"),
                    () -> "a session behind gets a catch-up wake, nothing else: " + wake);
            assertTrue(attempt < 10, "deltas never resumed after pull and ack");
            reader.round(List.of());
            socket.send("{\"type\":\"ack\",\"cursor\":" + reader.cursor + "}");
        }
    }

    private static Map<?, ?> data(Map<?, ?> event) { return (Map<?, ?>) event.get("data"); }

    private static long num(Object o) { return ((Number) o).longValue(); }

    @Test
    void aCommitReachesTheRegisteredSocketAsADeltaAndTheAckAdvancesTheCursorRecord() throws Exception {
        SyncTestClient reader = pulled("rt-delta-reader", "L-delta");
        SyncTestClient writer = pulled("rt-delta-writer", "L-delta");
        try (RealtimeTestSocket socket = connect(reader.clientId)) {
            Map<?, ?> hello = socket.nextEvent(10);
            assertEquals("hello", hello.get("event"));
            assertEquals(1L, num(data(hello).get("protocolVersion")));
            assertEquals("it-user", data(hello).get("actorId"));
            assertEquals(reader.clientId, data(hello).get("clientId"));
            assertEquals(false, data(hello).get("requiresSync"), () -> "hello: " + hello);

            writer.round(List.of(writer.upsert("d1", "first", null)));
            ResponseMessage delta = socket.nextDelta(10);
            assertInstanceOf(RespHeader.class, delta.frames().get(0));
            SubStart start = assertInstanceOf(SubStart.class, delta.frames().get(1));
            assertEquals("todos-L-delta", start.id());
            CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
            assertEquals("d1", commit.changes().get(0).rowId());
            SubEnd end = assertInstanceOf(SubEnd.class, delta.frames().get(3));
            assertEquals(commit.commitSeq(), end.nextCursor());

            socket.send("{\"type\":\"ack\",\"cursor\":" + commit.commitSeq() + "}");
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            long stored = -2;
            while (System.nanoTime() < deadline && stored != commit.commitSeq()) {
                stored = storedCursor(reader.clientId);
                Thread.sleep(50);
            }
            assertEquals(commit.commitSeq(), stored, "the ack must advance the client's cursor record (§8.2)");
        }
    }

    @Test
    void fanoutFollowsTheRegisteredScopes() throws Exception {
        SyncTestClient a = pulled("rt-scope-a", "L-scope-a");
        SyncTestClient b = pulled("rt-scope-b", "L-scope-b");
        SyncTestClient writer = new SyncTestClient(uri(), "rt-scope-writer", "L-scope-a");
        SyncTestClient writerB = new SyncTestClient(uri(), "rt-scope-writer-b", "L-scope-b");
        try (RealtimeTestSocket sa = connect(a.clientId); RealtimeTestSocket sb = connect(b.clientId)) {
            sa.nextEvent(10);
            sb.nextEvent(10);
            CommitFrame ca = liveDelta(sa, a, writer, "sa");
            assertTrue(ca.changes().stream().allMatch(c -> c.rowId().startsWith("sa")), "a sees only its list");
            // b's first delta is its own list's commit: it never saw a's
            CommitFrame cb = liveDelta(sb, b, writerB, "sb");
            assertTrue(cb.changes().stream().allMatch(c -> c.rowId().startsWith("sb")), "b sees only its list");
            sa.expectSilence(500);
        }
    }

    @Test
    void anOversizeDeltaBecomesADeltaTooLargeWake() throws Exception {
        SyncTestClient reader = pulled("rt-big-reader", "L-big");
        SyncTestClient writer = new SyncTestClient(uri(), "rt-big-writer", "L-big");
        try (RealtimeTestSocket socket = connect(reader.clientId)) {
            socket.nextEvent(10);
            writer.round(List.of(writer.upsert("big1", "x".repeat(4096), null)));
            Map<?, ?> wake = socket.nextEvent(10);
            assertEquals("sync", wake.get("event"));
            assertEquals("delta-too-large", data(wake).get("reason"));
            assertEquals(true, data(wake).get("requiresPull"));
        }
    }

    @Test
    void aBehindSessionGetsCatchupWakesUntilItPullsAndAcksThenDeltasResume() throws Exception {
        SyncTestClient reader = pulled("rt-behind-reader", "L-behind");
        SyncTestClient writer = new SyncTestClient(uri(), "rt-behind-writer", "L-behind");
        writer.round(List.of(writer.upsert("bh1", "while away", null)));
        try (RealtimeTestSocket socket = connect(reader.clientId)) {
            Map<?, ?> hello = socket.nextEvent(10);
            assertEquals(true, data(hello).get("requiresSync"), () -> "hello: " + hello);
            writer.round(List.of(writer.upsert("bh2", "still behind", null)));
            Map<?, ?> wake = socket.nextEvent(10);
            assertEquals("catchup-required", data(wake).get("reason"), () -> "wake: " + wake);

            reader.round(List.of());
            assertTrue(reader.replica.containsKey("bh1") && reader.replica.containsKey("bh2"));
            socket.send("{\"type\":\"ack\",\"cursor\":" + reader.cursor + "}");
            // a commit that reaches the session before its ack is still covered by the catch-up rule
            CommitFrame c = liveDelta(socket, reader, writer, "bh-live-");
            assertTrue(c.changes().get(0).rowId().startsWith("bh-live-"), "deltas resumed with the next commit");
        }
    }

    @Test
    void heartbeatsArriveAtTheConfiguredPeriod() throws Exception {
        try (RealtimeTestSocket socket = connect("rt-heartbeat")) {
            assertEquals("hello", socket.nextEvent(10).get("event"));
            Object m = socket.next(5);
            assertTrue(m instanceof String s && s.contains("\"event\":\"heartbeat\""), () -> "got " + m);
        }
    }

    @Test
    void aSocketRoundAnswersTheSameBytesAsHttp() throws Exception {
        SyncTestClient writer = new SyncTestClient(uri(), "rt-round-writer", "L-round");
        writer.round(List.of(writer.upsert("r1", "one", null), writer.upsert("r2", "two", null)));
        SyncTestClient client = new SyncTestClient(uri(), "rt-round-client", "L-round");
        byte[] request = pullRequest(client);
        HttpResponse<byte[]> http = client.post(request, false);
        assertEquals(200, http.statusCode());
        try (RealtimeTestSocket socket = connect(client.clientId)) {
            socket.nextEvent(10);
            byte[] overSocket = socket.round(request);
            assertArrayEquals(http.body(), overSocket, "§8.7: one handler, two framings");
        }
    }

    @Test
    void aRoundForAnotherClientIdFailsInBandWithInvalidClientId() throws Exception {
        SyncTestClient other = new SyncTestClient(uri(), "rt-someone-else", "L-round");
        try (RealtimeTestSocket socket = connect("rt-round-mismatch")) {
            socket.nextEvent(10);
            ResponseMessage r = ResponseDecoder.decode(socket.round(pullRequest(other)));
            assertEquals(2, r.frames().size());
            assertInstanceOf(RespHeader.class, r.frames().get(0));
            assertEquals("sync.invalid_client_id", assertInstanceOf(ErrorFrame.class, r.frames().get(1)).code());
            // the connection stays usable
            SyncTestClient self = new SyncTestClient(uri(), "rt-round-mismatch", "L-round");
            ResponseMessage ok = ResponseDecoder.decode(socket.round(pullRequest(self)));
            assertInstanceOf(SubStart.class, ok.frames().get(1));
        }
    }

    @Test
    void aPipelinedSecondRoundClosesTheConnection() throws Exception {
        SyncTestClient client = new SyncTestClient(uri(), "rt-pipeline", "L-round");
        client.round(List.of(client.upsert("pipe-0", "the partition row exists", null)));
        byte[] slowPush = PlainWebSocket.tagged(0x01, RequestEncoder.encode(new RequestMessage(1, List.of(
                new ReqHeader(client.clientId, 1), client.upsert("pipe-1", "waits for the partition lock", null)))));
        byte[] tagged = PlainWebSocket.tagged(0x01, pullRequest(client));
        try (RealtimeTestSocket socket = connect(client.clientId); Connection holder = It.jdbc()) {
            socket.nextEvent(10);
            // the first round is still in flight when the second arrives: its push waits on the lock held here
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement(
                    "SELECT 1 FROM sync_partitions WHERE partition = ? FOR UPDATE")) {
                ps.setString(1, PARTITION);
                ps.executeQuery().close();
            }
            socket.sendBinary(slowPush);
            socket.sendBinary(tagged);
            assertTrue(socket.awaitClose(15).startsWith("1002"), "pipelining is a §8.7 violation");
            holder.rollback();
        }
        // the first round may still be waiting for the lock released above (or have given up on its lock timeout):
        // taking the lock once more queues behind it, so it has finished before this test ends and cannot land
        // in the next test's sessions
        try (Connection again = It.jdbc()) {
            again.setAutoCommit(false);
            try (PreparedStatement ps = again.prepareStatement(
                    "SELECT 1 FROM sync_partitions WHERE partition = ? FOR UPDATE")) {
                ps.setString(1, PARTITION);
                ps.executeQuery().close();
            }
            again.rollback();
        }
        byte[] request = pullRequest(client);
        byte[] twice = new byte[1 + 2 * request.length];
        twice[0] = 0x01;
        System.arraycopy(request, 0, twice, 1, request.length);
        System.arraycopy(request, 0, twice, 1 + request.length, request.length);
        try (RealtimeTestSocket socket = connect(client.clientId)) {
            socket.nextEvent(10);
            socket.sendBinary(twice);
            assertTrue(socket.awaitClose(15).startsWith("1002"), "bytes past END are a §8.7 violation");
        }
    }

    @Test
    void anUnframedStreamClosesTheConnection() throws Exception {
        try (RealtimeTestSocket socket = connect("rt-unframed")) {
            socket.nextEvent(10);
            socket.sendBinary(new byte[] {0x01, 'n', 'o', 't', 's', 's', 'p', '2', '!', 0, 0});
            assertTrue(socket.awaitClose(15).startsWith("1002"));
        }
    }

    @Test
    void presenceJoinsUpdatesLeavesAndStaysWithinScope() throws Exception {
        SyncTestClient p1 = pulled("rt-pres-1", "L-pres");
        SyncTestClient p2 = pulled("rt-pres-2", "L-pres");
        SyncTestClient p3 = pulled("rt-pres-3", "L-other");
        SyncTestClient p4 = pulled("rt-pres-4", "L-pres");
        try (RealtimeTestSocket s1 = connect(p1.clientId); RealtimeTestSocket s2 = connect(p2.clientId);
             RealtimeTestSocket s3 = connect(p3.clientId)) {
            s1.nextEvent(10);
            s2.nextEvent(10);
            s3.nextEvent(10);
            s1.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:L-pres\",\"doc\":{\"name\":\"one\"}}}");
            Map<?, ?> join = data(s2.nextEvent(10));
            assertEquals("join", join.get("kind"));
            assertEquals(p1.clientId, join.get("clientId"));
            assertEquals("it-user", join.get("actorId"));
            assertEquals(Map.of("name", "one"), join.get("doc"));
            s3.expectSilence(300);

            s3.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:L-pres\",\"doc\":{}}}");
            assertEquals("presence.forbidden", data(s3.nextEvent(10)).get("error"));
            s1.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:L-pres\",\"doc\":{\"pad\":\""
                    + "p".repeat(400) + "\"}}}");
            assertEquals("presence.too_large", data(s1.nextEvent(10)).get("error"));

            s1.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:L-pres\",\"doc\":{\"name\":\"uno\"}}}");
            Map<?, ?> update = data(s2.nextEvent(10));
            assertEquals("update", update.get("kind"));
            assertEquals(Map.of("name", "uno"), update.get("doc"));

            try (RealtimeTestSocket s4 = connect(p4.clientId)) {
                assertEquals("hello", s4.nextEvent(10).get("event"));
                Map<?, ?> snapshot = data(s4.nextEvent(10));
                assertEquals("join", snapshot.get("kind"));
                assertEquals(p1.clientId, snapshot.get("clientId"));
            }
            s1.close();
            Map<?, ?> leave = data(s2.nextEvent(10));
            assertEquals("leave", leave.get("kind"));
            assertEquals(p1.clientId, leave.get("clientId"));
            assertNull(leave.get("doc"));
        }
    }

    @Test
    void theCommitFeedCatchesUpAfterItsConnectionIsKilled() throws Exception {
        SyncTestClient reader = pulled("rt-feed-reader", "L-feed");
        SyncTestClient writer = new SyncTestClient(uri(), "rt-feed-writer", "L-feed");
        try (RealtimeTestSocket socket = connect(reader.clientId)) {
            socket.nextEvent(10);
            int killed;
            try (Connection c = It.jdbc(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                         + " WHERE application_name = 'syncular-commit-feed'")) {
                rs.next();
                killed = rs.getInt(1);
            }
            assertEquals(1, killed, "one dedicated feed connection per node");
            writer.round(List.of(writer.upsert("f1", "while the listener was down", null)));
            CommitFrame c = assertInstanceOf(CommitFrame.class, socket.nextDelta(20).frames().get(2));
            assertEquals("f1", c.changes().get(0).rowId());
        }
    }

    @Test
    void theConfiguredMessageCapAppliesOnBothContainers() throws Exception {
        SyncTestClient client = new SyncTestClient(uri(), "rt-cap", "L-cap");
        // 300 KB: far above both containers' default buffers, below syncular.realtime.max-message-bytes (1 MiB)
        byte[] big = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(client.clientId, 1),
                client.upsert("cap1", "c".repeat(300_000), null))));
        try (RealtimeTestSocket socket = connect(client.clientId)) {
            socket.nextEvent(10);
            ResponseMessage r = ResponseDecoder.decode(socket.round(big));
            assertEquals(PushResult.Status.APPLIED,
                    assertInstanceOf(PushResult.class, r.frames().get(1)).status());
            try {
                socket.sendBinary(new byte[2 * 1024 * 1024]);
            } catch (java.util.concurrent.ExecutionException closedWhileSending) {
                // the server may close before the last byte is written; the close code below is the verdict
            }
            // Undertow answers 1009 (message too big); Tyrus may instead drop the connection while the client is
            // still writing the oversize frame, which the client sees as an aborted connection. Either way the
            // message was refused and the socket is gone.
            String closed = socket.awaitClose(15);
            assertTrue(closed.startsWith("1009") || closed.startsWith("error"), () -> "over the cap: " + closed);
        }
    }

    @Test
    void aMessageSentRightAfterTheUpgradeIsProcessedNotDropped() throws Exception {
        try (RealtimeTestSocket socket = connect("rt-early")) {
            // sent before hello arrived: the session may still be loading its registrations
            socket.send("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:nobody\",\"doc\":{}}}");
            assertEquals("hello", socket.nextEvent(10).get("event"));
            assertEquals("presence.forbidden", data(socket.nextEvent(10)).get("error"));
        }
    }

    @Test
    @Timeout(180)
    void twentySessionsReconnectingWhileCommitsFlowAllConverge() throws Exception {
        int n = 20;
        String list = "L-storm";
        List<SyncTestClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) clients.add(pulled("rt-storm-" + i, list));
        SyncTestClient writer = new SyncTestClient(uri(), "rt-storm-writer", list);
        ExecutorService pool = Executors.newFixedThreadPool(n + 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger sessionsOpened = new AtomicInteger();
        try {
            List<Future<?>> work = new ArrayList<>();
            work.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < 40; i++) {
                    writer.round(List.of(writer.upsert("st" + i, "v" + i, null)));
                    Thread.sleep(15);
                }
                return null;
            }));
            for (SyncTestClient c : clients) {
                work.add(pool.submit(() -> {
                    start.await();
                    try {
                        for (int round = 0; round < 3; round++) {
                            try (RealtimeTestSocket s = connect(c.clientId)) {
                                sessionsOpened.incrementAndGet();
                                follow(c, s, 150 + ThreadLocalRandom.current().nextInt(200));
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : work) f.get(120, TimeUnit.SECONDS);
            assertNull(failure.get(), () -> "a session failed: " + failure.get());
            assertEquals(3 * n, sessionsOpened.get());

            // every client reconnects once more, catches up as hello says, then one last commit must reach all
            // twenty as a delta: every session is registered, live and cursor-contiguous
            List<RealtimeTestSocket> sockets = new ArrayList<>();
            try {
                for (SyncTestClient c : clients) {
                    RealtimeTestSocket s = connect(c.clientId);
                    sockets.add(s);
                    Map<?, ?> hello = data(s.nextEvent(10));
                    boolean behind = num(hello.get("cursor")) < num(hello.get("latestCursor"));
                    assertEquals(behind, hello.get("requiresSync"), () -> "hello: " + hello);
                    if (behind) {
                        c.round(List.of());
                        s.send("{\"type\":\"ack\",\"cursor\":" + c.cursor + "}");
                    }
                }
                Thread.sleep(500);
                writer.round(List.of(writer.upsert("st-final", "last", null)));
                for (int i = 0; i < n; i++) {
                    ResponseMessage delta = sockets.get(i).nextDelta(15);
                    clients.get(i).apply(delta);
                }
            } finally {
                for (RealtimeTestSocket s : sockets) s.close();
            }
            SyncTestClient fresh = pulled("rt-storm-fresh", list);
            for (SyncTestClient c : clients) {
                assertEquals(fresh.snapshot(), c.snapshot(), () -> c.clientId + " did not converge");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Applies deltas in order and pulls on every wake, for {@code millis}. */
    private static void follow(SyncTestClient c, RealtimeTestSocket s, long millis) throws Exception {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) return;
            Object m = s.messages.poll(left, TimeUnit.NANOSECONDS);
            if (m == null) return;
            if (m instanceof byte[] b) {
                ResponseMessage delta = ResponseDecoder.decode(java.util.Arrays.copyOfRange(b, 1, b.length));
                SubEnd end = (SubEnd) delta.frames().get(delta.frames().size() - 1);
                if (end.nextCursor() > c.cursor) {
                    c.apply(delta);
                    s.send("{\"type\":\"ack\",\"cursor\":" + c.cursor + "}");
                }
                continue;
            }
            Map<?, ?> event = (Map<?, ?>) syncular.jakarta.wire.Json.parse((String) m);
            boolean pull = "sync".equals(event.get("event"))
                    || "hello".equals(event.get("event")) && Boolean.TRUE.equals(data(event).get("requiresSync"));
            if (pull) {
                c.round(List.of());
                s.send("{\"type\":\"ack\",\"cursor\":" + c.cursor + "}");
            }
        }
    }

    private static byte[] pullRequest(SyncTestClient client) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(client.clientId, 1));
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(client.subscription());
        return RequestEncoder.encode(new RequestMessage(1, frames));
    }

    private static long storedCursor(String clientId) throws Exception {
        try (Connection c = It.jdbc();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT cursor FROM sync_clients WHERE partition = ? AND client_id = ?")) {
            ps.setString(1, PARTITION);
            ps.setString(2, clientId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }
}

package syncular.jakarta.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.Leases;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.sync.Validation;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 13, realtime limits on the hub with real PostgreSQL, a virtual host clock, a virtual monotonic ticker and a
 * manual round executor: a lapsed credential (close, and never a round applied), the idle timeout (pongs keep a
 * socket), an unfinished round and the round buffer cap, round answers a client never reads, the connection caps,
 * the presence rate, and acks that cost no statement unless they advance the record (at most one write per interval).
 */
@Timeout(60)
class RealtimeLimitsTest {
    private static final long T0 = 1_700_000_000_000L;
    private final CompiledSchema schema = TestSchemas.tasks(1);
    private final ScopeResolver everything = identity -> Map.of("project_id", List.of("*"));
    private final AtomicLong now = new AtomicLong(T0);
    private final AtomicLong tick = new AtomicLong(1_000_000);
    private final Clock clock = now::get;
    private final SyncSettings sync = new SyncSettings(500, 256 * 1024, 8L * 1024 * 1024, 60_000, 1000,
            syncular.jakarta.sync.PartitionAdmission.Settings.DEFAULTS, 1000, 0, 1 << 20);
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Runnable> rounds = new LinkedBlockingQueue<>();
    private EmbeddedPostgresSupport.Pool db;
    private ServerStorage storage;
    private SyncHandler handler;
    private PostgresCommitFeed feed;
    private Thread feedThread;
    private RealtimeHub hub;
    private final String partition = EmbeddedPostgresSupport.partition("limits");
    private final Identity actor = new Identity("actor-1", partition);

    @BeforeEach
    void start() {
        db = EmbeddedPostgresSupport.newDatabase();
        PostgresServerStorage real = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::nowMs);
        real.ensureSchema(schema, List.of());
        // every storage call counted by method name (the ack tests count statements this way)
        storage = (ServerStorage) Proxy.newProxyInstance(ServerStorage.class.getClassLoader(),
                new Class<?>[] {ServerStorage.class}, (proxy, method, args) -> {
                    calls.computeIfAbsent(method.getName(), k -> new AtomicInteger()).incrementAndGet();
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        handler = new SyncHandler(storage, () -> schema, List::of, everything, clock, sync, null, Validation.NONE, Leases.OFF);
        feed = new PostgresCommitFeed(db::rawConnection, db, 50, 500);
        hub = hub(RealtimeSettings.DEFAULTS);
        feedThread = new Thread(() -> feed.run(hub));
        feedThread.start();
        for (int i = 0; i < 200 && !feed.listening(); i++) sleep(25);
        assertTrue(feed.listening());
    }

    private RealtimeHub hub(RealtimeSettings settings) {
        RealtimeHub.Context ctx = new RealtimeHub.Context(storage, handler, schema, everything, clock, 1 << 20, syncular.jakarta.events.ServerEvents.NONE);
        return new RealtimeHub(() -> Optional.of(ctx), feed, rounds::add, Runnable::run, settings, tick::get);
    }

    @AfterEach
    void stop() throws Exception {
        feed.close();
        feedThread.join(5_000);
        db.close();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private void runRounds() {
        Runnable r;
        while ((r = rounds.poll()) != null) r.run();
    }

    private int count(String method) { return calls.getOrDefault(method, new AtomicInteger()).get(); }

    /** Records what was sent and how the socket closed; sends complete at once. */
    static final class Recorder implements SocketChannel {
        final LinkedBlockingQueue<Object> sent = new LinkedBlockingQueue<>();
        final AtomicInteger pings = new AtomicInteger();
        volatile String closed;

        @Override
        public void sendText(String text, Consumer<Throwable> done) {
            sent.add(text);
            done.accept(null);
        }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            sent.add(data);
            done.accept(null);
        }

        @Override
        public void sendPing(Consumer<Throwable> done) {
            pings.incrementAndGet();
            done.accept(null);
        }

        @Override
        public void close(int code, String reason) { closed = code + " " + reason; }
    }

    /** A client that stopped reading: no send ever completes. */
    static final class Stuck implements SocketChannel {
        volatile String closed;

        @Override
        public void sendText(String text, Consumer<Throwable> done) { }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) { }

        @Override
        public void close(int code, String reason) { closed = code + " " + reason; }
    }

    private RequestMessage pull(String clientId, String project, long cursor) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(new Subscription("s-" + project, "tasks", Map.of("project_id", List.of(project)), null, cursor, null));
        return new RequestMessage(1, frames);
    }

    private RequestMessage pushRequest(String clientId, String id) {
        return new RequestMessage(1, List.of(new ReqHeader(clientId, 1), new PushCommit(clientId + "-" + id,
                List.of(PushCommit.Operation.upsert("tasks", id, null,
                        TestSchemas.taskPayload(schema, id, "p1", "t " + id, false))))));
    }

    private long push(String clientId, String id) {
        return handler.handle(actor, pushRequest(clientId, id)).appliedCommitSeqs().get(0);
    }

    private static byte[] tagged(RequestMessage m) {
        byte[] b = RequestEncoder.encode(m);
        byte[] t = new byte[b.length + 1];
        t[0] = 0x01;
        System.arraycopy(b, 0, t, 1, b.length);
        return t;
    }

    // ------------------------------------------------------------------ item 2: credential expiry, idle timeout

    @Test
    void aLapsedCredentialClosesTheSocketAndNoRoundIsAppliedAfterIt() {
        Identity lapsing = new Identity("actor-1", partition, null, T0 + 10_000);
        Recorder early = new Recorder();
        RealtimeSession queued = hub.connect(lapsing, "lapsing-1", early);
        // a round that arrived in time but reaches a thread after the expiry: never applied
        queued.onBinary(tagged(pushRequest("lapsing-1", "q1")));
        long before = storage.getMaxCommitSeq(partition);
        now.set(T0 + 10_000);
        runRounds();
        assertEquals("1008 sync.auth_required", early.closed);
        assertEquals(before, storage.getMaxCommitSeq(partition), "the round after expiry was not applied");

        // a round that arrives after the expiry is not even scheduled
        now.set(T0);
        Recorder late = new Recorder();
        RealtimeSession session = hub.connect(lapsing, "lapsing-2", late);
        now.set(T0 + 10_001);
        session.onBinary(tagged(pushRequest("lapsing-2", "q2")));
        assertEquals("1008 sync.auth_required", late.closed);
        assertTrue(rounds.isEmpty());

        // and a quiet socket is closed by the sweep at its expiry
        now.set(T0);
        Recorder quiet = new Recorder();
        hub.connect(lapsing, "lapsing-3", quiet);
        hub.sweep();
        assertNull(quiet.closed);
        now.set(T0 + 10_000);
        hub.sweep();
        assertEquals("1008 sync.auth_required", quiet.closed);
        assertEquals(0, hub.sessionCount());

        // an identity that has lapsed already never connects
        SyncException refused = assertThrows(SyncException.class, () -> hub.connect(lapsing, "lapsing-4",
                new Recorder()));
        assertEquals(ErrorCode.SYNC_AUTH_REQUIRED, refused.code());
    }

    @Test
    void theIdleTimeoutClosesASilentSocketButPongsKeepOneOpen() {
        long idle = RealtimeSettings.DEFAULTS.idleTimeoutMs();
        assertEquals(90_000, idle, "three heartbeats by default");
        Recorder silent = new Recorder();
        hub.connect(actor, "silent", silent);
        Recorder answering = new Recorder();
        RealtimeSession alive = hub.connect(actor, "answering", answering);
        for (int i = 0; i < 5; i++) {
            hub.heartbeat();   // a ping goes out with each heartbeat; only one of the two answers
            alive.onPong();
            tick.addAndGet(30_000);
            hub.sweep();
        }
        assertEquals("1001 idle timeout", silent.closed);
        assertNull(answering.closed);
        assertEquals(5, answering.pings.get());
        assertEquals(1, hub.sessionCount());
    }

    @Test
    void everySocketRoundResolvesScopesAfreshAsAnHttpRequestDoes() {
        // the grant changes after connect: a round must see the new answer, not the one resolved at connect
        java.util.concurrent.atomic.AtomicReference<Map<String, List<String>>> grant =
                new java.util.concurrent.atomic.AtomicReference<>(Map.of("project_id", List.of("p1")));
        ScopeResolver changing = identity -> grant.get();
        SyncHandler h = new SyncHandler(storage, () -> schema, List::of, changing, clock, sync, null, Validation.NONE, Leases.OFF);
        RealtimeHub.Context ctx = new RealtimeHub.Context(storage, h, schema, changing, clock, 1 << 20, syncular.jakarta.events.ServerEvents.NONE);
        RealtimeHub own = new RealtimeHub(() -> Optional.of(ctx), feed, rounds::add, Runnable::run,
                RealtimeSettings.DEFAULTS, tick::get);
        Recorder socket = new Recorder();
        RealtimeSession session = own.connect(actor, "regrant", socket);
        socket.sent.clear();
        session.onBinary(tagged(pull("regrant", "p1", -1)));
        runRounds();
        assertEquals(syncular.jakarta.wire.SubStart.Status.ACTIVE, firstSubStart(socket));
        grant.set(Map.of("project_id", List.of("p2")));
        session.onBinary(tagged(pull("regrant", "p1", -1)));
        runRounds();
        assertEquals(syncular.jakarta.wire.SubStart.Status.REVOKED, firstSubStart(socket));
    }

    private static syncular.jakarta.wire.SubStart.Status firstSubStart(Recorder socket) {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (Object o; (o = socket.sent.poll()) != null; ) {
            if (o instanceof ByteBuffer b && b.get(0) == 0x01) all.write(b.array(), 1, b.remaining() - 1);
        }
        return ((syncular.jakarta.wire.SubStart) syncular.jakarta.wire.ResponseDecoder.decode(all.toByteArray())
                .frames().get(1)).status();
    }

    // ------------------------------------------------------------------ item 4: rounds

    @Test
    void aRoundLeftUnfinishedIsDroppedAndARoundPastTheCapCloses() {
        hub.settings(RealtimeSettings.DEFAULTS.withHardening(90_000, 1024, 5_000, 10_000, 0, 20, 1_000));
        Recorder unfinished = new Recorder();
        RealtimeSession a = hub.connect(actor, "unfinished", unfinished);
        byte[] whole = tagged(pull("unfinished", "p1", -1));
        a.onBinary(Arrays.copyOf(whole, 12));   // the header and a frame's start: the END never comes
        tick.addAndGet(5_000);
        hub.sweep();
        assertNull(unfinished.closed, "within the round timeout");
        tick.addAndGet(1);
        hub.sweep();
        assertEquals("1002 unfinished sync round", unfinished.closed);

        Recorder big = new Recorder();
        RealtimeSession b = hub.connect(actor, "big", big);
        List<RequestFrame> frames = new ArrayList<>(pull("big", "p1", -1).frames());
        for (int i = 0; i < 30; i++) {
            frames.add(new Subscription("s-" + i, "tasks", Map.of("project_id", List.of("project-" + i)), null, -1,
                    null));
        }
        byte[] large = tagged(new RequestMessage(1, frames));
        assertTrue(large.length > 1024);
        b.onBinary(Arrays.copyOf(large, 500));
        assertNull(big.closed);
        b.onBinary(tagged0(Arrays.copyOfRange(large, 500, large.length)));
        assertEquals("1002 sync.invalid_request", big.closed, "what a socket buffers of one round is capped");
        assertTrue(rounds.isEmpty());
    }

    private static byte[] tagged0(byte[] rest) {
        byte[] t = new byte[rest.length + 1];
        t[0] = 0x01;
        System.arraycopy(rest, 0, t, 1, rest.length);
        return t;
    }

    @Test
    void roundAnswersAClientNeverReadsAreBoundedAndItIsClosed() {
        // 2 KiB of outbox: every pull answer here is a few hundred bytes, so a handful queue before the bound
        hub.settings(new RealtimeSettings(1 << 20, 30_000, 1 << 20, true, 16 * 1024, 2_048, 1024)
                .withHardening(90_000, 1 << 20, 60_000, 10_000, 0, 20, 1_000));
        Stuck stuck = new Stuck();
        RealtimeSession session = hub.connect(actor, "never-reads", stuck);   // hello is in flight forever
        int sent = 0;
        while (stuck.closed == null && sent < 200) {
            session.onBinary(tagged(pull("never-reads", "p1", -1)));
            runRounds();
            sent++;
        }
        assertEquals("1013 slow consumer", stuck.closed);
        assertTrue(sent < 50, "closed after a few rounds, not " + sent);
        assertEquals(0, hub.sessionCount());
    }

    // ------------------------------------------------------------------ item 4: connection caps, presence

    @Test
    void connectionCapsPerNodeAndPerActorRefuseWithTheConnectionLimitCode() {
        hub.settings(RealtimeSettings.DEFAULTS.withHardening(90_000, 1 << 20, 60_000, 3, 2, 20, 1_000));
        Identity other = new Identity("actor-2", partition);
        Recorder a1 = new Recorder();
        RealtimeSession first = hub.connect(actor, "c1", a1);
        hub.connect(actor, "c2", new Recorder());
        SyncException perActor = assertThrows(SyncException.class, () -> hub.connect(actor, "c3", new Recorder()));
        assertEquals(ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT, perActor.code());
        hub.connect(other, "o1", new Recorder());
        SyncException total = assertThrows(SyncException.class, () -> hub.connect(other, "o2", new Recorder()));
        assertEquals(ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT, total.code());

        first.closed(1000);   // a socket that goes away gives its slot back, exactly one
        hub.connect(actor, "c3", new Recorder());
        assertThrows(SyncException.class, () -> hub.connect(other, "o2", new Recorder()), "full again");
        // a refused clientId takes no slot either: with room for 4, the 4th still opens and only a 5th is refused
        hub.settings(RealtimeSettings.DEFAULTS.withHardening(90_000, 1 << 20, 60_000, 4, 0, 20, 1_000));
        assertThrows(SyncException.class, () -> hub.connect(actor, "", new Recorder()));
        hub.connect(other, "o2", new Recorder());
        SyncException fifth = assertThrows(SyncException.class, () -> hub.connect(other, "o3", new Recorder()));
        assertEquals(ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT, fifth.code());
    }

    @Test
    void presenceFloodsCloseTheSocketWithTheRateLimitedCode() {
        hub.settings(RealtimeSettings.DEFAULTS.withHardening(90_000, 1 << 20, 60_000, 10_000, 0, 3, 1_000));
        String publish = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:nowhere\",\"doc\":{}}}";
        Recorder steady = new Recorder();
        RealtimeSession calm = hub.connect(actor, "steady", steady);
        for (int i = 0; i < 10; i++) {
            calm.onText(publish);   // 3 a second is the budget: one every 400 ms stays within it
            tick.addAndGet(400);
        }
        assertNull(steady.closed);
        Recorder flood = new Recorder();
        RealtimeSession flooding = hub.connect(actor, "flood", flood);
        for (int i = 0; i < 3; i++) flooding.onText(publish);
        assertNull(flood.closed, "a burst of the budget is fine");
        flooding.onText(publish);
        assertEquals("1013 sync.rate_limited", flood.closed);
    }

    // ------------------------------------------------------------------ item 4: acks

    @Test
    void acksThatDoNotAdvanceTheRecordOrComeFasterThanTheIntervalCostNoStatements() {
        handler.handle(actor, pull("acker", "p1", -1));
        long c1 = push("writer", "a1");
        long c2 = push("writer", "a2");
        long c3 = push("writer", "a3");
        Recorder socket = new Recorder();
        RealtimeSession session = hub.connect(actor, "acker", socket);
        int reads = count("getClientRecord");
        int writes = count("putClientRecord");

        session.onText("{\"type\":\"ack\",\"cursor\":" + c1 + "}");   // advances: written at once
        assertEquals(writes + 1, count("putClientRecord"));
        for (int i = 0; i < 100; i++) session.onText("{\"type\":\"ack\",\"cursor\":" + c1 + "}");
        session.onText("{\"type\":\"ack\",\"cursor\":0}");
        assertEquals(reads + 1, count("getClientRecord"), "repeated and stale acks never reach the database");

        for (int i = 0; i < 50; i++) session.onText("{\"type\":\"ack\",\"cursor\":" + (i % 2 == 0 ? c2 : c3) + "}");
        assertEquals(writes + 1, count("putClientRecord"), "acks within the interval wait for it");
        assertEquals(reads + 1, count("getClientRecord"));
        hub.sweep();
        assertEquals(writes + 1, count("putClientRecord"), "not before the interval");
        tick.addAndGet(1_000);
        hub.sweep();
        assertEquals(writes + 2, count("putClientRecord"), "the held-back ack is written once");
        assertEquals(c3, storage.getClientRecord(partition, "acker").map(ClientRecord::cursor).orElseThrow());
        hub.sweep();
        assertEquals(writes + 2, count("putClientRecord"), "nothing left to write");

        // an ack still held back when the socket goes is written all the same
        long c4 = push("writer", "a4");   // (the push records its own client)
        int afterPush = count("putClientRecord");
        session.onText("{\"type\":\"ack\",\"cursor\":" + c4 + "}");
        assertEquals(afterPush, count("putClientRecord"), "within the interval: held back");
        session.closed(1001);
        runRounds();
        assertEquals(c4, storage.getClientRecord(partition, "acker").map(ClientRecord::cursor).orElseThrow());
    }
}

package syncular.jakarta.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageSession;
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
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * The hub on real PostgreSQL with two "nodes" — two storages, two commit feeds, two hubs on one database — and
 * recording sockets: a commit through node A reaches a session on node B (§8.2 fanout across nodes via
 * LISTEN/NOTIFY), and the §8.7 round rules with a manual executor so "in flight" is deterministic.
 */
@Timeout(60)
class RealtimeHubTest {
    private final CompiledSchema schema = TestSchemas.tasks(1);
    private final ScopeResolver everything = identity -> Map.of("project_id", List.of("*"));
    private final Clock clock = () -> 1_700_000_000_000L;
    private final SyncSettings settings = new SyncSettings(500, 256 * 1024, 8L * 1024 * 1024, 60_000, 1000,
            syncular.jakarta.sync.PartitionAdmission.Settings.DEFAULTS, 1000, 0, 1 << 20);
    private EmbeddedPostgresSupport.Pool db;
    private final List<Node> nodes = new ArrayList<>();
    private final String partition = EmbeddedPostgresSupport.partition("hub");
    private final Identity actor = new Identity("actor-1", partition);

    /** One server process: its own storage, handler, feed, hub; rounds queue until {@link #runRounds}. */
    final class Node {
        final PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), clock::nowMs);
        final SyncHandler handler;
        final PostgresCommitFeed feed;
        final RealtimeHub hub;
        final LinkedBlockingQueue<Runnable> rounds = new LinkedBlockingQueue<>();
        /** Two threads beside the feed's, as a two-core node has. */
        final java.util.concurrent.ExecutorService fanout = java.util.concurrent.Executors.newFixedThreadPool(2);
        final Thread feedThread;

        Node() { this(UnaryOperator.identity()); }

        /** A node whose hub reads through {@code view} of its storage (the handler does not). */
        Node(UnaryOperator<ServerStorage> view) {
            storage.ensureSchema(schema, List.of());
            handler = new SyncHandler(storage, () -> schema, List::of, everything, clock, settings, null,
                    Validation.NONE, Leases.OFF);
            feed = new PostgresCommitFeed(db::rawConnection, db, 50, 500);
            RealtimeHub.Context ctx = new RealtimeHub.Context(view.apply(storage), handler, schema, everything, clock,
                    1 << 20, syncular.jakarta.events.ServerEvents.NONE);
            hub = new RealtimeHub(() -> Optional.of(ctx), feed, rounds::add, fanout, RealtimeSettings.DEFAULTS);
            feedThread = new Thread(() -> feed.run(hub));
            feedThread.start();
            for (int i = 0; i < 200 && !feed.listening(); i++) sleep(25);
            assertTrue(feed.listening());
        }

        void runRounds() {
            Runnable r;
            while ((r = rounds.poll()) != null) r.run();
        }
    }

    /** A socket that records what the server sent and how it closed. */
    static class Recorder implements SocketChannel {
        final LinkedBlockingQueue<Object> sent = new LinkedBlockingQueue<>();
        volatile String closed;

        @Override
        public void sendText(String text, Consumer<Throwable> done) {
            sent.add(text);
            done.accept(null);
        }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            sent.add(b);
            done.accept(null);
        }

        @Override
        public void close(int code, String reason) { closed = code + " " + reason; }

        Object next() throws InterruptedException {
            Object o = sent.poll(10, TimeUnit.SECONDS);
            if (o == null) throw new AssertionError("nothing sent");
            return o;
        }

        String nextText() throws InterruptedException { return assertInstanceOf(String.class, next()); }

        ResponseMessage nextBinary(int tag) throws InterruptedException {
            Object o = next();
            byte[] b = assertInstanceOf(byte[].class, o, () -> "expected a binary message, got " + o);
            assertEquals(tag, b[0]);
            return ResponseDecoder.decode(Arrays.copyOfRange(b, 1, b.length));
        }
    }

    @BeforeEach
    void start() {
        db = EmbeddedPostgresSupport.newDatabase();
        nodes.add(new Node());
        nodes.add(new Node());
    }

    @AfterEach
    void stop() throws Exception {
        for (Node n : nodes) {
            n.feed.close();
            n.feedThread.join(5_000);
            n.fanout.shutdownNow();
        }
        db.close();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private RequestMessage pull(String clientId, String project, long cursor) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(new Subscription("s-" + project, "tasks", Map.of("project_id", List.of(project)), null, cursor, null));
        return new RequestMessage(1, frames);
    }

    private long push(Node node, String clientId, String id, String project) {
        PushCommit commit = new PushCommit(clientId + "-" + id, List.of(PushCommit.Operation.upsert("tasks", id, null,
                TestSchemas.taskPayload(schema, id, project, "t " + id, false))));
        SyncHandler.Handled h = node.handler.handle(actor, new RequestMessage(1,
                List.of(new ReqHeader(clientId, 1), commit)));
        return h.appliedCommitSeqs().get(0);
    }

    private static byte[] tagged(RequestMessage m) {
        byte[] b = RequestEncoder.encode(m);
        byte[] t = new byte[b.length + 1];
        t[0] = 0x01;
        System.arraycopy(b, 0, t, 1, b.length);
        return t;
    }

    @Test
    void aCommitThroughNodeAReachesASessionOnNodeB() throws Exception {
        Node a = nodes.get(0);
        Node b = nodes.get(1);
        b.handler.handle(actor, pull("reader", "p1", -1));
        Recorder socket = new Recorder();
        b.hub.connect(actor, "reader", socket);
        assertTrue(socket.nextText().contains("\"requiresSync\":false"));
        long seq = push(a, "writer", "t1", "p1");
        push(a, "writer", "t2", "elsewhere");   // not registered: nothing for the reader
        long third = push(a, "writer", "t3", "p1");
        ResponseMessage delta = socket.nextBinary(0x00);
        assertEquals(seq, assertInstanceOf(CommitFrame.class, delta.frames().get(2)).commitSeq());
        ResponseMessage next = socket.nextBinary(0x00);
        assertEquals(third, assertInstanceOf(CommitFrame.class, next.frames().get(2)).commitSeq());
        assertNull(socket.sent.poll(200, TimeUnit.MILLISECONDS));
    }

    /**
     * §8.2 across the attach: a commit that lands after a connecting session's log-head read and is fanned out before
     * the session is registered reached no one, so the session is woken for it. Node C's hub reads through a storage
     * whose preamble, once it has read, lets a commit through node A land and waits until C's feed has fanned it out
     * (a witness session on C receives it) — the real interleaving, on the real feed.
     */
    @Test
    void aCommitFannedOutBetweenTheLogHeadReadAndTheRegistrationWakesTheSession() throws Exception {
        Node a = nodes.get(0);
        boolean[] armed = {false};
        Recorder witness = new Recorder();
        Node c = new Node(real -> forwarding(ServerStorage.class, real, (m, args, result) -> {
            if (!m.getName().equals("openSession")) return result;
            return forwarding(StorageSession.class, (StorageSession) result, (sm, sargs, read) -> {
                if (sm.getName().equals("preambles") && armed[0]) {
                    armed[0] = false;
                    long seq = push(a, "writer", "between", "p1");
                    ResponseMessage delta = witness.nextBinary(0x00);
                    assertEquals(seq, assertInstanceOf(CommitFrame.class, delta.frames().get(2)).commitSeq());
                }
                return read;
            });
        }));
        nodes.add(c);
        c.handler.handle(actor, pull("witness", "p1", -1));
        c.hub.connect(actor, "witness", witness);
        assertTrue(witness.nextText().contains("\"requiresSync\""), "the witness's hello");
        c.handler.handle(actor, pull("late", "p1", -1));
        Recorder late = new Recorder();
        armed[0] = true;
        c.hub.connect(actor, "late", late);
        assertTrue(late.nextText().contains("\"requiresSync\":false"), "hello: the head read before the commit");
        String wake = late.nextText();
        assertTrue(wake.contains("\"reason\":\"catchup-required\""), wake);
    }

    /** What a forwarding decorator does after the real call: returns the result to hand back. */
    interface AfterCall {
        Object after(java.lang.reflect.Method method, Object[] args, Object result) throws Exception;
    }

    private static <T> T forwarding(Class<T> type, T real, AfterCall after) {
        return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    return after.after(method, args, result);
                }));
    }

    /** A socket that keeps the array behind each binary message it was handed. */
    static final class ArrayRecorder implements SocketChannel {
        final LinkedBlockingQueue<byte[]> arrays = new LinkedBlockingQueue<>();

        @Override
        public void sendText(String text, Consumer<Throwable> done) { done.accept(null); }

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            arrays.add(data.array());
            done.accept(null);
        }

        @Override
        public void close(int code, String reason) { }

        byte[] next() throws InterruptedException {
            byte[] b = arrays.poll(10, TimeUnit.SECONDS);
            if (b == null) throw new AssertionError("nothing sent");
            return b;
        }
    }

    /** Issue 15: a commit's delta is filtered and encoded once per distinct registration set, not once per socket. */
    @Test
    void socketsWithTheSameRegistrationsShareOneEncodingOfADelta() throws Exception {
        Node n = nodes.get(0);
        List<ArrayRecorder> sameScope = new ArrayList<>();
        for (String reader : List.of("r1", "r2", "r3")) {
            n.handler.handle(actor, pull(reader, "p1", -1));
            ArrayRecorder socket = new ArrayRecorder();
            n.hub.connect(actor, reader, socket);
            sameScope.add(socket);
        }
        n.handler.handle(actor, pull("other", "p2", -1));
        ArrayRecorder other = new ArrayRecorder();
        n.hub.connect(actor, "other", other);

        long seq = push(n, "writer", "t1", "p1");
        byte[] first = sameScope.get(0).next();
        for (ArrayRecorder socket : sameScope.subList(1, 3)) {
            assertSame(first, socket.next(), "the same encoded delta, not a copy per socket");
        }
        ResponseMessage delta = ResponseDecoder.decode(Arrays.copyOfRange(first, 1, first.length));
        assertEquals(seq, assertInstanceOf(CommitFrame.class, delta.frames().get(2)).commitSeq());
        assertNull(other.arrays.poll(200, TimeUnit.MILLISECONDS), "another scope's socket gets nothing");

        long p2 = push(n, "writer", "t2", "p2");
        byte[] theirs = other.next();
        assertEquals(p2, assertInstanceOf(CommitFrame.class, ResponseDecoder.decode(
                Arrays.copyOfRange(theirs, 1, theirs.length)).frames().get(2)).commitSeq());
        assertEquals("s-p2", assertInstanceOf(SubStart.class, ResponseDecoder.decode(
                Arrays.copyOfRange(theirs, 1, theirs.length)).frames().get(1)).id());
    }

    /**
     * Issue 15: a session keeps its delta key between commits; a round that replaces its registrations must leave
     * the encoding it shared with sessions of the old registrations (either order of the two sessions would send one
     * of them the other's delta, or none).
     */
    @Test
    void aRoundThatReplacesRegistrationsStopsSharingTheOldEncoding() throws Exception {
        Node n = nodes.get(0);
        List<Recorder> sockets = new ArrayList<>();
        List<RealtimeSession> sessions = new ArrayList<>();
        for (String reader : List.of("stays", "moves")) {
            n.handler.handle(actor, pull(reader, "p1", -1));
            Recorder socket = new Recorder();
            sessions.add(n.hub.connect(actor, reader, socket));
            socket.nextText();
            sockets.add(socket);
        }
        long first = push(n, "writer", "k1", "p1");
        for (Recorder socket : sockets) {
            assertEquals(first, assertInstanceOf(CommitFrame.class, socket.nextBinary(0x00).frames().get(2))
                    .commitSeq(), "both sessions had the key of p1");
        }

        Recorder moves = sockets.get(1);
        sessions.get(1).onBinary(tagged(pull("moves", "p2", -1)));
        n.runRounds();
        ResponseMessage round = moves.nextBinary(0x01);
        long cursor = round.frames().stream().filter(SubEnd.class::isInstance)
                .mapToLong(f -> ((SubEnd) f).nextCursor()).findFirst().orElseThrow();
        sessions.get(1).onText("{\"type\":\"ack\",\"cursor\":" + cursor + "}");

        long p2 = push(n, "writer", "k2", "p2");
        ResponseMessage theirs = moves.nextBinary(0x00);
        assertEquals("s-p2", assertInstanceOf(SubStart.class, theirs.frames().get(1)).id());
        assertEquals(p2, assertInstanceOf(CommitFrame.class, theirs.frames().get(2)).commitSeq());
        long p1 = push(n, "writer", "k3", "p1");
        ResponseMessage mine = sockets.get(0).nextBinary(0x00);
        assertEquals(p1, assertInstanceOf(CommitFrame.class, mine.frames().get(2)).commitSeq(),
                "the session of p1 got p1's commit and not p2's");
        assertNull(moves.sent.poll(200, TimeUnit.MILLISECONDS), "the moved session gets nothing of p1");
    }

    /** Issue 15: past {@code FANOUT_SLICE} sessions a commit goes out from more than one thread, still in order. */
    @Test
    void aCommitReachesSessionsPastOneSliceFromMoreThanOneThreadAndCommitsStayInOrder() throws Exception {
        Node n = nodes.get(0);
        int count = 2 * RealtimeHub.FANOUT_SLICE + 88;
        List<ThreadRecorder> sockets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String reader = "fan-" + i;
            n.handler.handle(actor, pull(reader, "p1", -1));
            ThreadRecorder socket = new ThreadRecorder();
            n.hub.connect(actor, reader, socket);
            sockets.add(socket);
        }
        List<Long> seqs = new ArrayList<>();
        for (int c = 0; c < 3; c++) seqs.add(push(n, "writer", "f" + c, "p1"));
        java.util.Set<String> senders = new java.util.HashSet<>();
        for (ThreadRecorder socket : sockets) {
            List<Long> got = new ArrayList<>();
            while (got.size() < 3) {
                Object o = socket.next();
                if (o instanceof String) continue;   // hello
                byte[] b = (byte[]) o;
                got.add(assertInstanceOf(CommitFrame.class, ResponseDecoder.decode(Arrays.copyOfRange(b, 1,
                        b.length)).frames().get(2)).commitSeq());
            }
            assertEquals(seqs, got, "every commit, once each, in commit order");
            senders.addAll(socket.threads);
        }
        assertTrue(senders.size() >= 2, () -> "delivered from " + senders);
    }

    /** A {@link Recorder} that also notes which threads sent to it. */
    static final class ThreadRecorder extends Recorder {
        final java.util.Set<String> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public void sendBinary(ByteBuffer data, Consumer<Throwable> done) {
            threads.add(Thread.currentThread().getName());
            super.sendBinary(data, done);
        }
    }

    /** Issue 13 items 3 and 6: the socket's clientId meets the same rules as the HTTP request header's. */
    @Test
    void aServerOwnedOrUnstorableClientIdIsRefusedAtConnect() {
        Node n = nodes.get(0);
        for (String bad : List.of("[\"backfill\",\"later_v2\"]", "[\"remote-command\",\"x\"]", "nul\u0000id",
                "x".repeat(600))) {
            SyncException e = org.junit.jupiter.api.Assertions.assertThrows(SyncException.class,
                    () -> n.hub.connect(actor, bad, new Recorder()), bad);
            assertTrue(e.code() == syncular.jakarta.wire.ErrorCode.SYNC_INVALID_CLIENT_ID
                    || e.code() == syncular.jakarta.wire.ErrorCode.SYNC_INVALID_REQUEST, e.code() + " for " + bad);
        }
    }

    @Test
    void aSecondRoundWhileOneIsInFlightClosesTheConnection() throws Exception {
        Node n = nodes.get(0);
        Recorder socket = new Recorder();
        RealtimeSession session = n.hub.connect(actor, "piper", socket);
        socket.nextText();
        session.onBinary(tagged(pull("piper", "p1", -1)));
        session.onBinary(tagged(pull("piper", "p1", -1)));
        assertEquals("1002 pipelined sync round", socket.closed);
        assertEquals(0, n.hub.sessionCount());
    }

    @Test
    void noDeltaInsideARoundCommitsThenWakeAndTheRoundReplacesRegistrations() throws Exception {
        Node n = nodes.get(0);
        n.handler.handle(actor, pull("rounder", "p1", -1));
        Recorder socket = new Recorder();
        RealtimeSession session = n.hub.connect(actor, "rounder", socket);
        socket.nextText();
        assertEquals(List.of("s-p1"), session.registrations().stream().map(Registration::id).toList());

        session.onBinary(tagged(pull("rounder", "p2", -1)));   // in flight until the executor runs it
        push(n, "writer", "w1", "p1");
        assertTrue(socket.nextText().contains("\"reason\":\"catchup-required\""), "§8.7: no 0x00 inside a round");
        n.runRounds();
        ResponseMessage r = socket.nextBinary(0x01);
        assertEquals("s-p2", assertInstanceOf(SubStart.class, r.frames().get(1)).id());
        assertEquals(List.of("s-p2"), session.registrations().stream().map(Registration::id).toList(),
                "a successful pull round replaces the registrations at round end");

        session.onBinary(tagged(pull("someone-else", "p3", -1)));
        n.runRounds();
        ResponseMessage failed = socket.nextBinary(0x01);
        assertEquals("sync.invalid_client_id", assertInstanceOf(ErrorFrame.class, failed.frames().get(1)).code());
        assertEquals(List.of("s-p2"), session.registrations().stream().map(Registration::id).toList(),
                "a failed round leaves registrations unchanged");
    }

    @Test
    void aRoundsOwnCommitWakesBeforeItsEndAndDeltasResumeAfterTheAck() throws Exception {
        Node n = nodes.get(0);
        n.handler.handle(actor, pull("own", "p1", -1));
        Recorder socket = new Recorder();
        RealtimeSession session = n.hub.connect(actor, "own", socket);
        socket.nextText();
        // a round that pushes into the registered scope and pulls it: the commit happens during the round, and the
        // feed brings it back asynchronously — it must still take the in-round path (§8.7 interleaving), before END
        PushCommit commit = new PushCommit("own-c1", List.of(PushCommit.Operation.upsert("tasks", "o1", null,
                TestSchemas.taskPayload(schema, "o1", "p1", "own write", false))));
        List<RequestFrame> frames = new ArrayList<>(pull("own", "p1", 0).frames());
        frames.add(1, commit);
        session.onBinary(tagged(new RequestMessage(1, frames)));
        // the notification of that commit arrives 50 ms after it was committed: a slow LISTEN connection,
        // deterministic here (the round's handler is past its commit by then and the round would end without waiting)
        n.feed.close();
        n.feedThread.join(5_000);
        long before = n.storage.getMaxCommitSeq(partition);
        Thread late = new Thread(() -> {
            long seq;
            while ((seq = n.storage.getMaxCommitSeq(partition)) == before) sleep(2);
            sleep(50);
            n.hub.committed(partition, seq);
        });
        late.start();
        n.runRounds();
        late.join();
        assertTrue(socket.nextText().contains("\"reason\":\"catchup-required\""),
                "the round's own commit degrades to a wake, sent before the round's END");
        ResponseMessage round = socket.nextBinary(0x01);
        long own = round.frames().stream().filter(syncular.jakarta.wire.PushResult.class::isInstance)
                .map(f -> ((syncular.jakarta.wire.PushResult) f).commitSeq()).findFirst().orElseThrow();
        assertNull(socket.sent.poll(300, TimeUnit.MILLISECONDS), "no standalone delta of the client's own write");

        session.onText("{\"type\":\"ack\",\"cursor\":" + own + "}");   // the post-round ack lifts suppression
        long next = push(n, "writer", "o2", "p1");
        n.hub.committed(partition, next);
        ResponseMessage delta = socket.nextBinary(0x00);
        assertEquals(next, assertInstanceOf(CommitFrame.class, delta.frames().get(2)).commitSeq());
    }

    @Test
    void aSessionLeftBehindThePruningHorizonGetsAResetRequiredWake() throws Exception {
        Node n = nodes.get(0);
        long first = push(n, "writer", "h1", "p1");
        n.handler.handle(actor, pull("behind", "p1", -1));
        Recorder behind = new Recorder();
        n.hub.connect(actor, "behind", behind);
        behind.nextText();
        push(n, "writer", "h2", "p1");
        ResponseMessage delta = behind.nextBinary(0x00);   // its cursor is now the second commit
        long second = assertInstanceOf(CommitFrame.class, delta.frames().get(2)).commitSeq();

        n.hub.horizonAdvanced(partition, second);   // at its cursor: its next pull is still incremental
        assertNull(behind.sent.poll(200, TimeUnit.MILLISECONDS));
        n.hub.horizonAdvanced(partition, second + 1);
        String wake = behind.nextText();
        assertTrue(wake.contains("\"reason\":\"reset-required\""), wake);
        assertTrue(first < second);
    }

    /** A socket whose sends never complete: a client that stopped reading. */
    static final class Stuck implements SocketChannel {
        final List<Object> started = new ArrayList<>();

        @Override
        public synchronized void sendText(String text, Consumer<Throwable> done) { started.add(text); }

        @Override
        public synchronized void sendBinary(ByteBuffer data, Consumer<Throwable> done) { started.add(data); }

        @Override
        public void close(int code, String reason) { }
    }

    @Test
    void aStuckSocketNeverHoldsUpOthersAndFallsBackToACatchupWake() throws Exception {
        Node n = nodes.get(0);
        // room for a few deltas per socket: the live socket drains at once, the stuck one fills up
        n.hub.settings(new RealtimeSettings(1 << 20, 30_000, 1 << 20, true, 16 * 1024, 1_000, 1024));
        n.handler.handle(actor, pull("stuck", "p1", -1));
        n.handler.handle(actor, pull("live", "p1", -1));
        Stuck stuck = new Stuck();
        RealtimeSession stuckSession = n.hub.connect(actor, "stuck", stuck);   // hello is in flight forever
        Recorder live = new Recorder();
        n.hub.connect(actor, "live", live);
        live.nextText();
        List<Long> pushed = new ArrayList<>();
        for (int i = 0; i < 12; i++) pushed.add(push(n, "writer", "s" + i, "p1"));
        for (long seq : pushed) {
            assertEquals(seq, assertInstanceOf(CommitFrame.class, live.nextBinary(0x00).frames().get(2)).commitSeq());
        }
        assertTrue(stuckSession.wakePending(), "a delta that does not fit the outbox becomes a catchup wake");
        assertEquals(1, stuck.started.size(), "still only hello in flight: the rest waits, bounded");
    }

    @Test
    void aBehindSessionWakesUntilItsAckCatchesUpAndAnOversizeDeltaWakesToo() throws Exception {
        Node n = nodes.get(0);
        n.handler.handle(actor, pull("behind", "p1", -1));
        long missed = push(n, "writer", "b1", "p1");
        Thread.sleep(300);   // b1's notice is fanned out before the session exists
        Recorder socket = new Recorder();
        RealtimeSession session = n.hub.connect(actor, "behind", socket);
        assertTrue(socket.nextText().contains("\"requiresSync\":true"));
        push(n, "writer", "b2", "p1");
        String wake = socket.nextText();
        assertTrue(wake.contains("\"reason\":\"catchup-required\"") && wake.contains("\"requiresPull\":true"), wake);
        long latest = n.storage.getMaxCommitSeq(partition);
        assertTrue(latest > missed);
        session.onText("{\"type\":\"ack\",\"cursor\":" + latest + "}");
        long live = push(n, "writer", "b3", "p1");
        assertEquals(live, assertInstanceOf(CommitFrame.class, socket.nextBinary(0x00).frames().get(2)).commitSeq());

        n.hub.settings(RealtimeSettings.DEFAULTS.withMaxDeltaBytes(64));
        push(n, "writer", "b4", "p1");
        assertTrue(socket.nextText().contains("\"reason\":\"delta-too-large\""));
    }

    @Test
    void anAckAdvancesTheCursorRecordOnlyForTheSameActor() throws Exception {
        Node n = nodes.get(0);
        n.handler.handle(actor, pull("acker", "p1", -1));
        long before = n.storage.getClientRecord(partition, "acker").orElseThrow().cursor();
        long seq = push(n, "writer", "a1", "p1");
        Recorder socket = new Recorder();
        RealtimeSession session = n.hub.connect(actor, "acker", socket);
        socket.nextText();
        session.onText("{\"type\":\"ack\",\"cursor\":" + seq + "}");
        assertEquals(seq, n.storage.getClientRecord(partition, "acker").orElseThrow().cursor());
        assertTrue(seq > before);
    }
}

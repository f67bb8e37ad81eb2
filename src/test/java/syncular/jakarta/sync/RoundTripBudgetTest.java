package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.realtime.RealtimeHub;
import syncular.jakarta.realtime.RealtimeSession;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.realtime.Registration;
import syncular.jakarta.realtime.SocketChannel;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * What a round costs the database (issue 14: it was ~30 round trips, 22 transactions and 11 pool checkouts), counted
 * on the JDBC calls that each take one round trip: a statement execution (pgjdbc sends a multi-statement text as one
 * pipelined round trip) and a COMMIT.
 */
class RoundTripBudgetTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static EmbeddedPostgresSupport.Pool db;

    /** The hubs' commit feed: these tests count round trips, not deliveries. */
    private static PostgresCommitFeed feed;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        feed = new PostgresCommitFeed(db::rawConnection, db, 50, 500);
    }

    @AfterAll
    static void close() {
        feed.close();
        db.close();
    }

    /** Counts checkouts, executions and commits of every connection it hands out. */
    static final class Counting implements DataSource {
        final DataSource real;
        final AtomicInteger checkouts = new AtomicInteger();
        final AtomicInteger roundTrips = new AtomicInteger();
        final AtomicInteger commits = new AtomicInteger();
        /** The text of every statement prepared. */
        final List<String> prepared = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** The text of every statement executed. */
        final List<String> executed = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** While set, a statement that stores client records and reads the gate waits for it before it runs. */
        volatile java.util.concurrent.CountDownLatch heldEnd;
        /** Statements holding at {@link #heldEnd}. */
        final AtomicInteger endsHeld = new AtomicInteger();
        /** Executions of statements holding this text are counted, and the {@link #failAt}th fails as a refused
         *  value would. */
        volatile String failMatching = "";
        final AtomicInteger failAt = new AtomicInteger(-1);

        Counting(DataSource real) { this.real = real; }

        /** While set, a checkout counts, then waits for it: a read held in flight. */
        volatile java.util.concurrent.CountDownLatch held;

        void reset() {
            checkouts.set(0);
            roundTrips.set(0);
            commits.set(0);
            prepared.clear();
            executed.clear();
        }

        @Override
        public Connection getConnection() throws SQLException {
            checkouts.incrementAndGet();
            java.util.concurrent.CountDownLatch hold = held;
            if (hold != null) {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    throw new SQLException(e);
                }
            }
            Connection c = real.getConnection();
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                        if (m.getName().equals("commit")) {
                            commits.incrementAndGet();
                            roundTrips.incrementAndGet();
                        }
                        Object result = StorageHooks.invoke(c, m, args);
                        if (m.getName().startsWith("prepare") && args != null && args[0] instanceof String sql) {
                            prepared.add(sql);
                        }
                        if (result instanceof Statement s && m.getName().startsWith("prepare")) {
                            return statement(s, args != null && args[0] instanceof String sql ? sql : "");
                        }
                        return result;
                    });
        }

        private Object statement(Statement s, String sql) {
            Class<?> type = s instanceof java.sql.PreparedStatement ? java.sql.PreparedStatement.class
                    : Statement.class;
            return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                if (m.getName().startsWith("execute")) {
                    roundTrips.incrementAndGet();
                    executed.add(sql);
                    java.util.concurrent.CountDownLatch hold = heldEnd;
                    if (hold != null && sql.startsWith("INSERT INTO sync_clients")) {
                        endsHeld.incrementAndGet();
                        hold.await();
                    }
                    if (!failMatching.isEmpty() && sql.contains(failMatching) && failAt.getAndDecrement() == 0) {
                        throw new SQLException("invalid input syntax (injected)", "22P02");
                    }
                }
                return StorageHooks.invoke(s, m, args);
            });
        }

        @Override public Connection getConnection(String u, String p) throws SQLException { return getConnection(); }
        @Override public PrintWriter getLogWriter() { return null; }
        @Override public void setLogWriter(PrintWriter out) { }
        @Override public void setLoginTimeout(int seconds) { }
        @Override public int getLoginTimeout() { return 0; }
        @Override public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }
        @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
        @Override public boolean isWrapperFor(Class<?> iface) { return false; }
    }

    /** A handler on a storage whose every connection comes through {@code counting}. */
    private static SyncHandler handlerOver(Counting counting) {
        PostgresServerStorage storage = new PostgresServerStorage(counting, new JdbcTransactionRunner(counting),
                () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        return new SyncHandler(storage, () -> SCHEMA, List::of, identity -> Map.of("project_id", List.of("*")),
                () -> 1_000L, SyncSettings.DEFAULTS, (request, bytes) -> {
                    throw new AssertionError("no segment is published here");
                }, Validation.NONE, Leases.OFF);
    }

    @Test
    void aPushAndPullRoundTakesFiveRoundTripsOneTransactionAndAtMostThreeCheckouts() {
        Counting counting = new Counting(db);
        SyncHandler handler = handlerOver(counting);
        String partition = EmbeddedPostgresSupport.partition("budget-rt");
        Identity actor = new Identity("actor-1", partition);
        long cursor = -1;
        for (int round = 0; round < 3; round++) {
            counting.reset();
            Subscription sub = new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, cursor, null);
            SyncHandler.Handled handled = handler.handle(actor, new RequestMessage(1, List.of(
                    new ReqHeader("c1", 1),
                    new PushCommit("k" + round, List.of(PushCommit.Operation.upsert("tasks", "t" + round, null,
                            TestSchemas.taskPayload(SCHEMA, "t" + round, "p1", "title", false)))),
                    new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS), sub)));
            List<ResponseFrame> frames = handled.response().frames();
            assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class, frames.get(1)).status());
            cursor = assertInstanceOf(SubEnd.class, frames.get(frames.size() - 1)).nextCursor();
            if (round == 0) continue;   // the first round of a client bootstraps; measure the steady loop
            assertEquals(round + 1, cursor, "the pull saw the round's own commit");
            // preamble; lock + gate + re-check + rows; writes + append + result; COMMIT; window page + horizon +
            // client record + gate re-read (the request's end rides on its complete window)
            assertEquals(5, counting.roundTrips.get(), "database round trips of a push-pull round");
            assertEquals(1, counting.commits.get(), "one transaction: the push group's");
            assertTrue(counting.checkouts.get() <= 3, "checkouts: the session (taken again after the push wait) "
                    + "and the push group's; was " + counting.checkouts.get());
        }
    }

    /**
     * Issue 15: a WebSocket attach (touch, client record, log head, registration) is one round trip; the socket's
     * first round starts from the attach's preamble, so it costs its pull less the preamble; a later round costs what
     * the pull costs (the socket registers from the client record the round stored).
     */
    @Test
    void aWebSocketAttachTakesOneRoundTripAndItsFirstRoundOneLessThanItsPull() {
        Counting counting = new Counting(db);
        Attached attached = attach(counting, "budget-attach", () -> 0L);
        assertEquals(1, counting.roundTrips.get(), "the preamble (touch, client record, log head)");
        assertEquals(1, counting.checkouts.get());
        assertEquals(List.of("s"), attached.session.registrations().stream().map(Registration::id).toList(),
                "the client record's subscription is registered");

        counting.reset();
        attached.session.onBinary(round(pullOf("p2")));   // the hub's executor runs it here
        int firstRound = counting.roundTrips.get();
        assertEquals(List.of("s2"), attached.session.registrations().stream().map(Registration::id).toList(),
                "the round's subscriptions replace the registrations");
        counting.reset();
        attached.session.onBinary(round(pullOf("p3")));
        int secondRound = counting.roundTrips.get();
        counting.reset();
        // the same pull over HTTP, of another project: each of these bootstraps an empty project
        attached.handler.handle(attached.actor, pullOf("p4"));
        int http = counting.roundTrips.get();
        assertEquals(http - 1, firstRound, "the first round has no preamble of its own");
        assertEquals(http, secondRound, "a later round costs its pull");
    }

    /** The attach's preamble is the first round's only while the round follows the attach closely. */
    @Test
    void aFirstRoundLongAfterItsAttachReadsItsOwnPreamble() {
        Counting counting = new Counting(db);
        AtomicLong tick = new AtomicLong();
        Attached attached = attach(counting, "budget-late", tick::get);
        tick.addAndGet(RealtimeSession.ATTACH_READ_REUSE_MS + 1);
        counting.reset();
        attached.session.onBinary(round(pullOf("p2")));
        int lateRound = counting.roundTrips.get();
        counting.reset();
        attached.handler.handle(attached.actor, pullOf("p3"));
        assertEquals(counting.roundTrips.get(), lateRound, "the late first round read its own preamble");
    }

    /** Another client's commit of a row of {@code project}, reported to the hub as the commit feed would. */
    private static long pushAndAnnounce(Attached attached, String project) {
        SyncHandler.Handled pushed = attached.handler.handle(attached.actor, new RequestMessage(1, List.of(
                new ReqHeader("c2", 1), new PushCommit("k1", List.of(PushCommit.Operation.upsert("tasks", "t1",
                        null, TestSchemas.taskPayload(SCHEMA, "t1", project, "title", false)))))));
        long seq = pushed.appliedCommitSeqs().get(0);
        attached.hub.committed(attached.actor.partition(), seq);
        return seq;
    }

    /** The frames of the last round response the socket was sent. */
    private static List<ResponseFrame> lastResponse(Attached attached) {
        byte[] last = attached.sent.get(attached.sent.size() - 1);
        return ResponseDecoder.decode(java.util.Arrays.copyOfRange(last, 1, last.length)).frames();
    }

    /**
     * A commit the socket heard of after its attach (realtime/behind-session-wakes-then-deltas-resume: the client is
     * woken for it, then pulls) is in the first round's pull, which still starts from the attach's preamble: the
     * commit feed's word is its log head.
     */
    @Test
    void aFirstRoundAfterACommitTheSocketHeardOfPullsIt() {
        Counting counting = new Counting(db);
        Attached attached = attach(counting, "budget-heard", () -> 0L);
        long seq = pushAndAnnounce(attached, "p2");
        counting.reset();
        attached.session.onBinary(round(pullOf("p2")));
        int round = counting.roundTrips.get();
        List<ResponseFrame> frames = lastResponse(attached);
        assertEquals(seq, assertInstanceOf(SubEnd.class, frames.get(frames.size() - 1)).nextCursor(),
                "the round pulled through the commit it was woken for");
        counting.reset();
        attached.handler.handle(attached.actor, pullOf("p3"));
        assertEquals(counting.roundTrips.get() - 1, round, "without a preamble of its own");
    }

    /**
     * A round whose window lies within what the hub fanned out reads it from the log's recent tail: no window
     * statement, only the request's end (client record, gate re-read), and the commit is in the answer.
     */
    @Test
    void aRoundWhoseWindowTheHubFannedOutReadsNoWindow() {
        Counting counting = new Counting(db);
        Attached attached = attach(counting, "budget-tail", () -> 0L);
        long seq = pushAndAnnounce(attached, "p1");   // the hub reads it once, for the fanout and the tail
        counting.reset();
        RequestMessage incremental = new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, seq - 1, null)));
        attached.session.onBinary(round(incremental));
        assertEquals(1, counting.roundTrips.get(), "the request's end only: " + counting.prepared);
        assertTrue(counting.prepared.stream().noneMatch(sql -> sql.contains("sync_change_scopes")),
                "no window statement: " + counting.prepared);
        List<ResponseFrame> frames = lastResponse(attached);
        assertEquals(seq, assertInstanceOf(CommitFrame.class, frames.get(frames.size() - 2)).commitSeq());
        assertEquals(seq, assertInstanceOf(SubEnd.class, frames.get(frames.size() - 1)).nextCursor());
        assertEquals(seq, new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L)
                .getClientRecord(attached.actor.partition(), "c1").orElseThrow().cursor(), "the cursor is stored");
    }

    /**
     * The hub keeps every commit the feed reports, whether or not the partition has sockets on this node: an HTTP
     * pull through it reads no window statement.
     */
    @Test
    void anHttpPullReadsNoWindowTheHubKeptWithoutSockets() {
        Counting counting = new Counting(db);
        PostgresServerStorage storage = new PostgresServerStorage(counting, new JdbcTransactionRunner(counting),
                () -> 1_000L);
        ScopeResolver all = identity -> Map.of("project_id", List.of("*"));
        SyncHandler handler = new SyncHandler(storage, () -> SCHEMA, List::of, all, () -> 1_000L,
                SyncSettings.DEFAULTS, null, Validation.NONE, Leases.OFF);
        RealtimeHub.Context ctx = new RealtimeHub.Context(storage, handler, SCHEMA, all, () -> 1_000L, 1 << 20,
                syncular.jakarta.events.ServerEvents.NONE);
        RealtimeHub hub = new RealtimeHub(() -> Optional.of(ctx), feed, Runnable::run, Runnable::run,
                RealtimeSettings.DEFAULTS);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("budget-kept"));
        handler.handle(actor, pullFrom("c1", "s", -1));
        SyncHandler.Handled pushed = handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("c2", 1),
                new PushCommit("k1", List.of(PushCommit.Operation.upsert("tasks", "t1", null,
                        TestSchemas.taskPayload(SCHEMA, "t1", "p1", "title", false)))))));
        long seq = pushed.appliedCommitSeqs().get(0);
        hub.committed(actor.partition(), seq);
        counting.reset();
        List<ResponseFrame> frames = handler.handle(actor, pullFrom("c1", "s", seq - 1)).response().frames();
        assertTrue(counting.prepared.stream().noneMatch(sql -> sql.contains("sync_change_scopes")),
                "no window statement: " + counting.prepared);
        assertEquals(seq, assertInstanceOf(CommitFrame.class, frames.get(frames.size() - 2)).commitSeq());
    }

    /**
     * Attaches of one partition that queue while another is read are read together, each with its own client record:
     * one round trip for all of them, and a clientId bound to another actor is still refused. A group whose read
     * fails is read again one client at a time, and each attach gets what it would have got alone.
     */
    @Test
    void attachesThatQueueWhileOneIsReadShareOneRoundTrip() throws Exception {
        for (boolean groupFails : List.of(false, true)) attachesQueued(groupFails);
    }

    /** With {@code groupFails}, the group's read fails and is read again one client at a time. */
    private void attachesQueued(boolean groupFails) throws Exception {
        Counting counting = new Counting(db);
        Attached attached = attach(counting, "budget-group", () -> 0L);
        Identity other = new Identity("actor-2", attached.actor.partition());
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        counting.reset();
        if (groupFails) {
            counting.failMatching = "WITH ORDINALITY";
            counting.failAt.set(1);   // the leader's read goes through, the group's fails
        }
        counting.held = gate;
        java.util.concurrent.FutureTask<RealtimeSession> leader = attaching(attached.hub, attached.actor, "c1");
        while (counting.checkouts.get() < 1) Thread.sleep(1);   // the leader's read is in flight
        List<java.util.concurrent.FutureTask<RealtimeSession>> queued = List.of(
                attaching(attached.hub, attached.actor, "c1"), attaching(attached.hub, attached.actor, "c9"),
                attaching(attached.hub, other, "c1"));
        counting.held = null;
        awaitParked(queued.size() + 1);   // and the leader, waiting for its connection
        gate.countDown();
        assertEquals(List.of("s"), leader.get().registrations().stream().map(Registration::id).toList());
        assertEquals(List.of("s"), queued.get(0).get().registrations().stream().map(Registration::id).toList());
        assertEquals(List.of(), queued.get(1).get().registrations(), "c9 has no client record");
        java.util.concurrent.ExecutionException refused = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> queued.get(2).get());
        assertEquals(ErrorCode.SYNC_INVALID_CLIENT_ID,
                assertInstanceOf(SyncException.class, refused.getCause()).code(), "c1 is actor-1's (§1.5)");
        assertEquals(groupFails ? 5 : 2, counting.roundTrips.get(), groupFails
                ? "the leader's read, the three's that failed, then each alone"
                : "the leader's read, then the three's");
        assertEquals(2, counting.checkouts.get());
    }

    /** {@code clientId} attaching on a thread of its own. */
    private static java.util.concurrent.FutureTask<RealtimeSession> attaching(RealtimeHub hub, Identity actor,
                                                                             String clientId) {
        java.util.concurrent.FutureTask<RealtimeSession> task = new java.util.concurrent.FutureTask<>(
                () -> hub.connect(actor, clientId, QUIET));
        new Thread(task, "attach-" + clientId + "-" + actor.actorId()).start();
        return task;
    }

    /** Waits until {@code n} attaching threads wait (the leader for its connection, the others in its queue). */
    private static void awaitParked(int n) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            long parked = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("attach-") && t.getState() == Thread.State.WAITING).count();
            if (parked >= n) return;
            Thread.sleep(1);
        }
        throw new AssertionError("the attaches did not queue");
    }

    /** A socket that takes every send. */
    private static final SocketChannel QUIET = new SocketChannel() {
        @Override
        public void sendText(String text, java.util.function.Consumer<Throwable> done) { done.accept(null); }

        @Override
        public void sendBinary(java.nio.ByteBuffer data, java.util.function.Consumer<Throwable> done) {
            done.accept(null);
        }

        @Override
        public void close(int code, String reason) { }
    };

    /** An attach's preamble whose serve gate was read for another schema version is not a round's. */
    @Test
    void aPreambleReadForAnotherSchemaVersionIsNotAdopted() {
        Counting counting = new Counting(db);
        SyncHandler handler = handlerOver(counting);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("budget-version"));
        PostgresServerStorage storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        handler.handle(actor, pullOf("p1"));
        RequestPreamble current;
        RequestPreamble other;
        try (StorageSession s = storage.openSession(actor.partition())) {
            current = s.preamble(1_000L, "unused", SCHEMA.version(), "c1", true);
            other = s.preamble(1_000L, "unused", SCHEMA.version() + 1, "c1", true);
        }
        counting.reset();
        handler.handle(actor, pullOf("p1"), current);
        assertEquals(1, counting.roundTrips.get(), "adopted: window page + client record + gate re-read");
        counting.reset();
        handler.handle(actor, pullOf("p1"), other);
        assertEquals(2, counting.roundTrips.get(), "its own preamble, then the window");
    }

    private record Attached(SyncHandler handler, Identity actor, RealtimeHub hub, RealtimeSession session,
                            List<byte[]> sent) { }

    /** A client with one pulled subscription ("s" of p1), then attached over a socket on a fresh hub. */
    private static Attached attach(Counting counting, String partition, java.util.function.LongSupplier ticker) {
        PostgresServerStorage storage = new PostgresServerStorage(counting, new JdbcTransactionRunner(counting),
                () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        ScopeResolver all = identity -> Map.of("project_id", List.of("*"));
        SyncHandler handler = new SyncHandler(storage, () -> SCHEMA, List::of, all, () -> 1_000L,
                SyncSettings.DEFAULTS, null, Validation.NONE, Leases.OFF);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition(partition));
        handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, -1, null))));
        RealtimeHub.Context ctx = new RealtimeHub.Context(storage, handler, SCHEMA, all, () -> 1_000L, 1 << 20,
                syncular.jakarta.events.ServerEvents.NONE);
        RealtimeHub hub = new RealtimeHub(() -> Optional.of(ctx), feed, Runnable::run, Runnable::run,
                RealtimeSettings.DEFAULTS, ticker);
        counting.reset();
        List<byte[]> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        RealtimeSession session = hub.connect(actor, "c1", new SocketChannel() {
            @Override
            public void sendText(String text, java.util.function.Consumer<Throwable> done) { done.accept(null); }

            @Override
            public void sendBinary(java.nio.ByteBuffer data, java.util.function.Consumer<Throwable> done) {
                byte[] b = new byte[data.remaining()];
                data.get(b);
                sent.add(b);
                done.accept(null);
            }

            @Override
            public void close(int code, String reason) { }
        });
        return new Attached(handler, actor, hub, session, sent);
    }

    /** A first pull of subscription "s2" of {@code project} (a bootstrap of an empty project). */
    private static RequestMessage pullOf(String project) {
        return new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("s2", "tasks", Map.of("project_id", List.of(project)), null, -1, null)));
    }

    /** {@code request} as a socket round message (tag 0x01, §8.7). */
    private static byte[] round(RequestMessage request) {
        byte[] encoded = RequestEncoder.encode(request);
        byte[] round = new byte[encoded.length + 1];
        round[0] = (byte) syncular.jakarta.wire.RealtimeControl.TAG_ROUND;
        System.arraycopy(encoded, 0, round, 1, encoded.length);
        return round;
    }

    /** What only the statement storing several requests' client records holds. */
    private static final String GROUPED_RECORDS = "FROM unnest(?::text[], ?::text[], ?::int[]";

    /** Client records stored by a request's end, alone or grouped. */
    private static long recordStatements(Counting counting, boolean grouped) {
        return counting.executed.stream().filter(sql -> sql.startsWith("INSERT INTO sync_clients")
                && sql.contains(GROUPED_RECORDS) == grouped).count();
    }

    /** A pull of subscription {@code id} of p1 from {@code cursor} by {@code clientId}. */
    private static RequestMessage pullFrom(String clientId, String id, long cursor) {
        return new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription(id, "tasks", Map.of("project_id", List.of("p1")), null, cursor, null)));
    }

    /** {@code request} handled on a thread of its own, named for {@link #awaitEnding}. */
    private static java.util.concurrent.FutureTask<SyncHandler.Handled> handling(SyncHandler handler, Identity actor,
                                                                               RequestMessage request, String name) {
        java.util.concurrent.FutureTask<SyncHandler.Handled> task = new java.util.concurrent.FutureTask<>(
                () -> handler.handle(actor, request));
        new Thread(task, "attach-end-" + name).start();
        return task;
    }

    /**
     * Issue 15: ends of a partition's requests that queue while {@link SyncHandler#END_GROUPS_AT_ONCE} are stored are
     * stored together: every client record, then one gate re-read, in one round trip; two ends of one client in a
     * group store the later record. A group that fails is stored again one end at a time, and every request still
     * succeeds.
     */
    @Test
    void requestEndsThatQueueWhileOneIsStoredShareOneRoundTrip() throws Exception {
        for (boolean groupFails : List.of(false, true)) {
            Counting counting = new Counting(db);
            SyncHandler handler = handlerOver(counting);
            Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("budget-ends"));
            handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("w", 1), new PushCommit("k1",
                    List.of(PushCommit.Operation.upsert("tasks", "t1", null,
                            TestSchemas.taskPayload(SCHEMA, "t1", "p1", "title", false)))))));
            int leaders = SyncHandler.END_GROUPS_AT_ONCE;
            List<String> leading = new ArrayList<>();
            for (int i = 1; i <= leaders; i++) leading.add("l" + i);
            for (String client : List.of("c1", "c2", "c3")) handler.handle(actor, pullFrom(client, "s", -1));
            for (String client : leading) handler.handle(actor, pullFrom(client, "s", -1));
            // the first leader is released first, the others only once the queued ends are stored: a leader that
            // finishes hands its turn to the oldest end waiting, which takes every end queued behind it
            java.util.concurrent.CountDownLatch releaseFirst = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch releaseRest = new java.util.concurrent.CountDownLatch(1);
            counting.reset();
            if (groupFails) {
                counting.failMatching = GROUPED_RECORDS;
                counting.failAt.set(0);
            }
            // clients at the head: their windows are empty by their bounds, so each request ends on its own trip;
            // as many groups as may be stored at once, each held in its statement
            List<java.util.concurrent.Future<SyncHandler.Handled>> held = new ArrayList<>();
            for (int i = 0; i < leaders; i++) {
                counting.heldEnd = i == 0 ? releaseFirst : releaseRest;
                held.add(handling(handler, actor, pullFrom(leading.get(i), "s1", 1), leading.get(i)));
                while (counting.endsHeld.get() < i + 1) Thread.sleep(1);
            }
            counting.heldEnd = null;
            var queued = List.of(handling(handler, actor, pullFrom("c2", "s2", 1), "c2"),
                    handling(handler, actor, pullFrom("c3", "s3", 1), "c3"),
                    handling(handler, actor, pullFrom("c2", "s4", 1), "c2-again"));
            awaitEnding(queued.size() + leaders);   // and the leaders, held in their statements
            releaseFirst.countDown();
            for (var q : queued) q.get();
            releaseRest.countDown();
            for (var l : held) l.get();
            PostgresServerStorage plain = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
            java.util.function.Function<String, String> subscribed = client -> plain.getClientRecord(
                    actor.partition(), client).orElseThrow().subscriptions().get(0).id();
            for (String client : leading) assertEquals("s1", subscribed.apply(client));
            assertEquals("s3", subscribed.apply("c3"));
            assertTrue(Set.of("s2", "s4").contains(subscribed.apply("c2")), subscribed.apply("c2"));
            assertEquals(1, recordStatements(counting, true), "one statement for the three that queued");
            assertEquals(groupFails ? leaders + 3 : leaders, recordStatements(counting, false),
                    groupFails ? "the leaders', then each of the failed group's alone" : "the leaders'");
        }
    }

    /** Waits until {@code n} requests wait in their ends' group (the leader in its statement, the others queued). */
    private static void awaitEnding(int n) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            long ending = Thread.getAllStackTraces().entrySet().stream()
                    .filter(e -> e.getKey().getName().startsWith("attach-end-")
                            && e.getKey().getState() == Thread.State.WAITING
                            && java.util.Arrays.stream(e.getValue())
                                    .anyMatch(f -> f.getClassName().equals(GroupCommit.class.getName())))
                    .count();
            if (ending >= n) return;
            Thread.sleep(5);
        }
        throw new AssertionError("the requests did not queue their ends");
    }

    /** Issue 15: the request's end (client record, gate re-read) rides on the window page of a complete window. */
    @Test
    void aPullOnlyRoundTakesTwoRoundTripsAndNoTransaction() {
        Counting counting = new Counting(db);
        SyncHandler handler = handlerOver(counting);
        Identity actor = new Identity("actor-1", EmbeddedPostgresSupport.partition("budget-pull"));
        Subscription sub = new Subscription("s", "tasks", Map.of("project_id", List.of("p1")), null, 0, null);
        RequestMessage pull = new RequestMessage(1, List.of(new ReqHeader("c1", 1),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS), sub));
        handler.handle(actor, pull);
        counting.reset();
        handler.handle(actor, pull);
        assertEquals(2, counting.roundTrips.get(), "preamble; window page + client record + gate re-read");
        // and with a cursor that moves: the record is written in the window's statement, still two
        handler.handle(actor, new RequestMessage(1, List.of(new ReqHeader("c2", 1),
                new PushCommit("k1", List.of(PushCommit.Operation.upsert("tasks", "t1", null,
                        TestSchemas.taskPayload(SCHEMA, "t1", "p1", "title", false)))))));
        counting.reset();
        SyncHandler.Handled moved = handler.handle(actor, pull);
        assertEquals(2, counting.roundTrips.get(), "preamble; window page + client record + gate re-read");
        List<ResponseFrame> frames = moved.response().frames();
        assertEquals(1, assertInstanceOf(SubEnd.class, frames.get(frames.size() - 1)).nextCursor());
        assertEquals(1, new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L)
                .getClientRecord(actor.partition(), "c1").orElseThrow().cursor(), "stored with the window");
        assertEquals(0, counting.commits.get());
        assertEquals(1, counting.checkouts.get(), "one connection for the whole request");
    }
}

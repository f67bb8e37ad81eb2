package syncular.jakarta.realtime;

import java.lang.System.Logger.Level;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.ScopePattern;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.ClientSubscription;
import syncular.jakarta.storage.CommitFeed;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.sync.Scopes;
import syncular.jakarta.sync.ClientIds;
import syncular.jakarta.sync.GroupCommit;
import syncular.jakarta.sync.RecentCommits;
import syncular.jakarta.sync.StorableInput;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.RealtimeControl;
import syncular.jakarta.wire.WireVersion;

/**
 * The realtime hub (SPEC §8): connects sessions (§8.1 hello with registrations from the client record), fans commits
 * out as the {@link CommitFeed} reports them — local and remote commits alike, only after they committed — runs
 * socket rounds on an executor through the very same {@link SyncHandler} as {@code POST /sync} (§8.7), keeps presence
 * (§8.6) and sends heartbeats (§8.5). Fanout never waits on a socket: each session has a bounded {@link Outbox}.
 *
 * <p>Thread-safe. Feed callbacks arrive on the feed's single thread, which hands a commit's deliveries past the first
 * {@link #FANOUT_SLICE} sessions to the fanout executor and waits for them; socket callbacks on container threads.
 * Locks are taken in one order: the presence lock, then a session's, then its outbox's; sends happen under the first
 * two. So a socket's unregistration ({@link RealtimeSession#closed}), which takes the presence lock, must never run
 * on a thread inside one of those sends: the web layer hands a close the container reports from inside a send of
 * ours to another thread.
 */
public final class RealtimeHub implements CommitFeed.Listener {
    private static final System.Logger LOG = System.getLogger(RealtimeHub.class.getName());
    /** What the hub needs of the running server; replaced as a whole by a restart (conformance reset). */
    public record Context(ServerStorage storage, SyncHandler handler, CompiledSchema schema, ScopeResolver resolver,
                          Clock clock, long maxRequestBytes, ServerEvents events) { }

    private final Supplier<Optional<Context>> context;
    private final CommitFeed feed;
    private final Executor rounds;
    /** Where a commit's deliveries beyond the first {@link #FANOUT_SLICE} sessions run, a slice each. */
    private final Executor fanout;
    private volatile RealtimeSettings settings;
    private final Map<String, Set<RealtimeSession>> byPartition = new ConcurrentHashMap<>();
    /**
     * The highest commitSeq the feed has announced per partition (committed or missed), recorded BEFORE the
     * partition's sessions are read. A registration adds its session BEFORE reading this, so a commit newer than
     * what the session was told at hello is either fanned out to it or seen here (and woken for): no database read.
     */
    private final Map<String, Long> announced = new ConcurrentHashMap<>();
    private final Object presenceLock = new Object();
    private final PresenceRegistry presence = new PresenceRegistry();
    /** Monotonic milliseconds for timeouts and rates (never the host clock, which a test host may move). */
    private final LongSupplier ticker;
    /** Open sockets of this node, in total and per (partition, actor): the connection caps. */
    private final AtomicInteger connections = new AtomicInteger();
    private final Map<String, AtomicInteger> perActor = new ConcurrentHashMap<>();
    /** At most this many of a partition's attaches read together. */
    static final int MAX_ATTACH_GROUP = 64;
    /**
     * A partition's attaches that queue while one is read are read together (issue 15): one touch, one serve-gate
     * read and every client record with the log head, in one round trip (the reconnect storm's attaches queued
     * behind each other's round trips on the database).
     */
    private final GroupCommit<String, AttachRead> attaches = new GroupCommit<>(MAX_ATTACH_GROUP, id -> 1,
            this::readPreambles);

    /** An attach's preamble, or why it could not be read. */
    private record AttachRead(RequestPreamble preamble, RuntimeException failure) { }

    /**
     * {@code rounds}: where socket rounds and cursor writes run; {@code fanout}: where a commit's deliveries to more
     * than {@link #FANOUT_SLICE} sessions run beside the feed's thread ({@code Runnable::run}: all on that thread).
     */
    public RealtimeHub(Supplier<Optional<Context>> context, CommitFeed feed, Executor rounds, Executor fanout,
                       RealtimeSettings settings) {
        this(context, feed, rounds, fanout, settings, () -> System.nanoTime() / 1_000_000);
    }

    public RealtimeHub(Supplier<Optional<Context>> context, CommitFeed feed, Executor rounds, Executor fanout,
                       RealtimeSettings settings, LongSupplier ticker) {
        this.context = context;
        this.feed = feed;
        this.rounds = rounds;
        this.fanout = fanout;
        this.settings = settings;
        this.ticker = ticker;
    }

    long tick() { return ticker.getAsLong(); }

    long now() { return clockNow(); }

    public RealtimeSettings settings() { return settings; }

    /** Conformance-host limits (maxDeltaBytes, maxPresenceBytes) replace the configured ones. */
    public void settings(RealtimeSettings next) { this.settings = next; }

    public int sessionCount() { return byPartition.values().stream().mapToInt(Set::size).sum(); }

    long maxRequestBytes() { return context().maxRequestBytes(); }

    /** Open sockets on this node (the metrics' gauge). */
    public int openSockets() { return connections.get(); }

    /** Where socket events go (issue 20); nowhere while the server is not running. */
    ServerEvents events() { return context.get().map(Context::events).orElse(ServerEvents.NONE); }

    private Context context() {
        return context.get().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
    }

    // ------------------------------------------------------------------ connect

    /**
     * §8.1: registers an authenticated connection and sends hello, then the presence snapshot of its keys.
     * Throws {@link SyncException} for a refused client id (the caller closes with 1008 and the code).
     */
    public RealtimeSession connect(Identity identity, String clientId, SocketChannel channel) {
        Context ctx = context();
        if (clientId == null || clientId.isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID, "clientId query parameter is required (§8.1)");
        }
        // §1.5: the socket's clientId becomes its client record and its rounds' idempotency key, as on HTTP
        ClientIds.refuseReserved(clientId);
        StorableInput.checkClientId(clientId);
        if (identity.expiredAt(ctx.clock().nowMs())) {
            throw new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "the credential has expired");
        }
        String actorKey = actorKey(identity.partition(), identity.actorId());
        reserve(actorKey);
        RealtimeSession registered = null;
        try {
            registered = register(ctx, identity, clientId, channel);
            return registered;
        } finally {
            if (registered == null) release(actorKey);
        }
    }

    private RealtimeSession register(Context ctx, Identity identity, String clientId, SocketChannel channel) {
        String partition = identity.partition();
        // issue 15: the partition touch, the client record and the log head in one round trip (the request
        // preamble's), shared with the partition's attaches that queued meanwhile; the socket's first round starts
        // from it (its serve gate is read for that round)
        AttachRead read = attaches.submit(partition, clientId);
        if (read.failure() != null) throw read.failure();
        RequestPreamble pre = read.preamble();
        PartitionRegistryEntry registry = pre.registry();
        Optional<ClientRecord> record = pre.clientRecord();
        if (record.isPresent() && !record.get().actorId().equals(identity.actorId())) {
            throw new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID,
                    "clientId is bound to a different actor in this partition (§1.5)");
        }
        List<Registration> registrations = registrations(ctx, identity, record);
        long latest = pre.maxCommitSeq();
        long cursor = record.map(ClientRecord::cursor).orElse(-1L);
        int wire = record.map(ClientRecord::wireVersion).filter(WireVersion::isSupported).orElse(WireVersion.V1);
        RealtimeSession session = new RealtimeSession(this, identity, clientId, registry.logEpoch(), wire, cursor,
                latest, registrations, scopeKeys(ctx.schema(), registrations), channel, settings, pre);
        long now = ctx.clock().nowMs();
        // hello is queued first, so nothing the session is sent can overtake it
        session.send(new RealtimeControl.Hello(RealtimeControl.PROTOCOL_VERSION, session.sessionId,
                identity.actorId(), clientId, cursor, latest, record.isEmpty() || cursor < latest, now));
        // joining the partition and taking the snapshot is one step under the presence lock: a peer's join fanned
        // out in between would otherwise reach the session twice, once live and once in the snapshot
        synchronized (presenceLock) {
            byPartition.computeIfAbsent(partition, p -> ConcurrentHashMap.newKeySet()).add(session);
            for (String key : session.scopeKeys()) snapshot(session, key, now);
        }
        // a commit announced between the log-head read and the registration reached no one: §8.2 says wake
        VarHandle.fullFence();   // the registration above is visible before this read (see announced)
        long after = announced.getOrDefault(partition, -1L);
        if (after > latest) session.missed(after, now);
        ctx.events().emit(new ServerEvent.SocketOpened(now, partition, identity.actorId(), clientId, session.sessionId,
                cursor, latest));
        return session;
    }

    /**
     * The preambles of a group of one partition's attaches, in one round trip; a group that fails is read again one
     * client at a time, so a failure (a stored record that would not parse, say) fails its own client's attach only.
     */
    private List<AttachRead> readPreambles(String partition, List<String> clientIds) {
        Context ctx = context();
        long now = ctx.clock().nowMs();
        int version = ctx.schema().version();
        try (StorageSession s = ctx.storage().openSession(partition)) {
            if (clientIds.size() > 1) {
                try {
                    return s.preambles(now, UUID.randomUUID().toString(), version, clientIds).stream()
                            .map(pre -> new AttachRead(pre, null)).toList();
                } catch (RuntimeException groupFailed) {
                    // read again one by one below: each failure reaches the attach it belongs to
                }
            }
            List<AttachRead> each = new ArrayList<>(clientIds.size());
            for (String clientId : clientIds) {
                try {
                    each.add(new AttachRead(s.preambles(now, UUID.randomUUID().toString(), version,
                            List.of(clientId)).get(0), null));
                } catch (RuntimeException e) {
                    each.add(new AttachRead(null, e));
                }
            }
            return each;
        }
    }

    private static String actorKey(String partition, String actorId) { return partition + '\u0000' + actorId; }

    /** Takes a connection slot, total and per actor, or refuses (1013 {@code sync.websocket_connection_limit}). */
    private void reserve(String actorKey) {
        RealtimeSettings s = settings;
        if (connections.incrementAndGet() > s.maxConnections()) {
            connections.decrementAndGet();
            throw new SyncException(ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT,
                    "this server holds syncular.realtime.max-connections sockets");
        }
        if (s.maxConnectionsPerActor() > 0) {
            AtomicInteger mine = perActor.computeIfAbsent(actorKey, k -> new AtomicInteger());
            if (mine.incrementAndGet() > s.maxConnectionsPerActor()) {
                release(actorKey);
                throw new SyncException(ErrorCode.SYNC_WEBSOCKET_CONNECTION_LIMIT,
                        "this actor holds syncular.realtime.max-connections-per-actor sockets");
            }
        } else {
            perActor.computeIfAbsent(actorKey, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    private void release(String actorKey) {
        connections.decrementAndGet();
        perActor.computeIfPresent(actorKey, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /** §8.1/§8.7: the client record's subscription list, resolved to effective scopes; revoked ones register nothing. */
    private static List<Registration> registrations(Context ctx, Identity identity, Optional<ClientRecord> record) {
        Map<String, List<String>> allowed;
        try {
            allowed = ctx.resolver().resolveScopes(identity);
        } catch (RuntimeException e) {
            // §3.2 rule 5, §7.3.3: a failure or an outage registers nothing; the next round re-registers
            allowed = null;
        }
        List<Registration> out = new ArrayList<>();
        for (ClientSubscription s : record.map(ClientRecord::subscriptions).orElse(List.of())) {
            Optional<TableSchema> table = ctx.schema().table(s.table());
            if (table.isEmpty()) continue;
            if (!s.scopes().keySet().stream().allMatch(k -> table.get().scopeForVariable(k).isPresent())) continue;
            Scopes.effective(s.scopes(), allowed).ifPresent(e -> out.add(new Registration(s.id(), s.table(), e)));
        }
        return out;
    }

    /** §8.6.3: the scope keys ({@code prefix:value}) the registrations cover. */
    static Set<String> scopeKeys(CompiledSchema schema, List<Registration> registrations) {
        Set<String> keys = new LinkedHashSet<>();
        for (Registration r : registrations) {
            Optional<TableSchema> table = schema.table(r.table());
            if (table.isEmpty()) continue;
            for (Map.Entry<String, List<String>> e : r.effective().entrySet()) {
                Optional<ScopePattern> pattern = table.get().scopeForVariable(e.getKey());
                if (pattern.isEmpty()) continue;
                for (String v : e.getValue()) keys.add(pattern.get().scopeKey(v));
            }
        }
        return keys;
    }

    void disconnect(RealtimeSession session, int code, String reason) {
        Set<RealtimeSession> sessions = byPartition.get(session.partition());
        if (sessions == null || !sessions.remove(session)) return;
        release(actorKey(session.partition(), session.actorId()));
        long now = clockNow();
        events().emit(new ServerEvent.SocketClosed(now, session.partition(), session.actorId(), session.clientId(),
                session.sessionId, code, reason, tick() - session.openedTick()));
        synchronized (presenceLock) {
            for (String key : presence.keysOf(session.partition(), session)) leave(session, key, now);
        }
    }

    /** This node's open sockets of one client. */
    public int socketsOf(String partition, String clientId) {
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) return 0;
        return (int) sessions.stream().filter(s -> s.clientId().equals(clientId)).count();
    }

    /**
     * An operator disconnects a client (issue 20): this node's sockets of it are closed 1012, so the client
     * reconnects and re-authenticates as after a restart. Answers how many were closed.
     */
    public int disconnect(String partition, String clientId) {
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) return 0;
        int closed = 0;
        for (RealtimeSession s : List.copyOf(sessions)) {
            if (!s.clientId().equals(clientId)) continue;
            s.close(RealtimeSession.SERVICE_RESTART, "disconnected by an operator");
            closed++;
        }
        return closed;
    }

    /** Closes every socket and forgets all presence (conformance reset, shutdown). */
    public void closeAll(int code, String reason) {
        for (Set<RealtimeSession> sessions : byPartition.values()) {
            for (RealtimeSession s : List.copyOf(sessions)) s.close(code, reason);
        }
        byPartition.clear();
        announced.clear();
        context.get().ifPresent(c -> c.handler().recentCommits().forgetAll());
        synchronized (presenceLock) {
            presence.clearAll();
        }
    }

    // ------------------------------------------------------------------ fanout

    @Override
    public void committed(String partition, long commitSeq) {
        // read before it is announced, so that the recent tail holds every commit a round can hear of from this hub
        // (a socket's first round may pull through the announced head); read whether or not the partition has
        // sessions while the tail keeps commits: a commit it misses restarts it, and the pulls of every client whose
        // cursor is older then read their windows from the database
        Optional<RecentCommits> recent = context.get().map(c -> c.handler().recentCommits());
        boolean early = hasSessions(partition) || recent.map(RecentCommits::keeps).orElse(false);
        Optional<CommitFeed.CommitRead> read = early ? readAndKeep(partition, commitSeq, recent)
                : Optional.empty();
        announced.merge(partition, commitSeq, Math::max);
        VarHandle.fullFence();   // see announced
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null || sessions.isEmpty()) return;
        if (!early) read = readAndKeep(partition, commitSeq, recent);   // its first session came meanwhile
        long now = clockNow();
        if (read.isEmpty()) {
            // pruned before we read it: whoever it concerned must pull
            for (RealtimeSession s : sessions) s.missed(commitSeq, now);
            return;
        }
        Optional<StoredCommit> commit = read.map(CommitFeed.CommitRead::commit);
        int maxDelta = settings.maxDeltaBytes();
        long started = System.nanoTime();
        AtomicInteger reached = new AtomicInteger();
        // one filtering and encoding per distinct (wire, epoch, registrations), shared by the sessions that have it
        Map<RealtimeSession.DeltaKey, byte[]> encoded = new ConcurrentHashMap<>();
        List<RealtimeSession> all = List.copyOf(sessions);
        // a socket write costs its sender tens of microseconds (mostly the kernel's): slices of the sessions go out
        // beside the feed's thread, which delivers the first and waits for the others, so the next commit reaches
        // no session before this one did
        List<CompletableFuture<Void>> others = new ArrayList<>();
        for (int from = FANOUT_SLICE; from < all.size(); from += FANOUT_SLICE) {
            List<RealtimeSession> slice = all.subList(from, Math.min(all.size(), from + FANOUT_SLICE));
            Runnable delivery = () -> deliver(slice, commit.get(), maxDelta, now, encoded, reached);
            try {
                others.add(CompletableFuture.runAsync(delivery, fanout));
            } catch (RejectedExecutionException full) {
                delivery.run();
            }
        }
        deliver(all.subList(0, Math.min(all.size(), FANOUT_SLICE)), commit.get(), maxDelta, now, encoded, reached);
        for (CompletableFuture<Void> f : others) f.join();
        events().emit(new ServerEvent.FanoutCompleted(now, partition, commitSeq, reached.get(),
                (System.nanoTime() - started) / 1_000));
    }

    private boolean hasSessions(String partition) {
        Set<RealtimeSession> sessions = byPartition.get(partition);
        return sessions != null && !sessions.isEmpty();
    }

    /**
     * The whole commit, which also goes to the recent tail the node's pulls read their windows from; a commit gone
     * before it was read, or read without a log epoch, breaks the tail.
     */
    private Optional<CommitFeed.CommitRead> readAndKeep(String partition, long commitSeq,
                                                        Optional<RecentCommits> recent) {
        Optional<CommitFeed.CommitRead> read = feed.readCommit(partition, commitSeq);
        recent.ifPresent(tail -> {
            if (read.isPresent() && read.get().logEpoch() != null) {
                tail.committed(partition, read.get().logEpoch(), read.get().commit());
            } else {
                tail.forget(partition);
            }
        });
        return read;
    }

    /** Sessions a commit's fanout delivers to on one thread. */
    static final int FANOUT_SLICE = 256;

    private static void deliver(List<RealtimeSession> sessions, StoredCommit commit, int maxDelta, long now,
                                Map<RealtimeSession.DeltaKey, byte[]> encoded, AtomicInteger reached) {
        for (RealtimeSession s : sessions) {
            try {
                s.deliver(commit, maxDelta, now, encoded);
                reached.incrementAndGet();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "delivering commit " + commit.commitSeq() + " to a realtime session failed", e);
            }
        }
    }

    /**
     * The partition's log epoch was rotated (SPEC §2.1: a backup restore), on this node or another: every session
     * holds a cursor, a head and an epoch of the old log, so each is closed 1012 (service restart) and reconnects to
     * the restored one. Its next round carries the old epoch and is answered {@code resetRequired}.
     */
    @Override
    public void rewound(String partition) {
        announced.remove(partition);
        context.get().ifPresent(c -> c.handler().recentCommits().forget(partition));
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) return;
        for (RealtimeSession s : List.copyOf(sessions)) s.close(RealtimeSession.SERVICE_RESTART, "log epoch rotated");
    }

    /** The retention pass moved {@code partition}'s horizon: sessions left behind it get a reset-required wake. */
    public void horizonAdvanced(String partition, long horizonSeq) {
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) return;
        long now = clockNow();
        for (RealtimeSession s : sessions) s.behindHorizon(horizonSeq, now);
    }

    @Override
    public void missed(String partition, long throughSeq) {
        announced.merge(partition, throughSeq, Math::max);
        context.get().ifPresent(c -> c.handler().recentCommits().forget(partition));
        VarHandle.fullFence();   // see announced
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) return;
        long now = clockNow();
        for (RealtimeSession s : sessions) s.missed(throughSeq, now);
    }

    /**
     * §8.5 heartbeat to every socket, preceded by a WebSocket ping: clients send nothing of their own, and the pong
     * every client answers with is what keeps a live socket within the idle timeout.
     */
    public void heartbeat() {
        String json = new RealtimeControl.Heartbeat(clockNow()).toJson();
        for (Set<RealtimeSession> sessions : byPartition.values()) {
            for (RealtimeSession s : sessions) {
                s.ping();
                s.sendText(json);
            }
        }
    }

    /**
     * The periodic limits pass (about once a second): lapsed credentials, idle sockets and unfinished rounds are
     * closed, acks held back by the ack interval are written.
     */
    public void sweep() {
        long now = clockNow();
        long tick = tick();
        for (Set<RealtimeSession> sessions : byPartition.values()) {
            for (RealtimeSession s : sessions) {
                try {
                    s.sweep(now, tick);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "the realtime sweep failed for a session", e);
                }
            }
        }
    }

    private long clockNow() {
        return context.get().map(c -> c.clock().nowMs()).orElseGet(System::currentTimeMillis);
    }

    // ------------------------------------------------------------------ acks, rounds

    /** Writes an acked cursor to the client record; answers the cursor the record now holds (−1 = unknown). */
    long persistCursor(RealtimeSession session, long acked) {
        try {
            Context ctx = context();
            Optional<ClientRecord> record = ctx.storage().getClientRecord(session.partition(), session.clientId);
            if (record.isEmpty()) return -1;
            if (acked <= record.get().cursor()) return record.get().cursor();
            if (!session.owns(record.get(), ctx.storage().getPartitionLogEpoch(session.partition()))) return -1;
            ClientRecord r = record.get();
            ctx.storage().putClientRecord(session.partition(), new ClientRecord(r.clientId(), r.actorId(),
                    r.wireVersion(), acked, ctx.clock().nowMs(), r.subscriptions()));
            return acked;
        } catch (RuntimeException e) {
            // best effort (REF): the next pull records the cursor anyway
            LOG.log(Level.DEBUG, "persisting an acked cursor failed", e);
            return -1;
        }
    }

    /** {@link #persistCursor} on the round executor (best effort: a full executor drops it; the next pull records). */
    void persistLater(RealtimeSession session, long acked) {
        try {
            rounds.execute(() -> persistCursor(session, acked));
        } catch (RejectedExecutionException e) {
            LOG.log(Level.DEBUG, "no thread to persist an acked cursor", e);
        }
    }

    void runRound(RealtimeSession session, byte[] request) {
        try {
            rounds.execute(() -> {
                try {
                    session.round(context().handler(), request);
                } catch (RuntimeException e) {
                    LOG.log(Level.ERROR, "socket sync round failed mid-stream", e);
                    session.close(1011, "sync.internal_error");
                }
            });
        } catch (RejectedExecutionException e) {
            session.close(1013, "sync.internal_error");
        }
    }

    /**
     * §8.7 registration at round end from the client record the round stored (so no second read of it), and §8.6.3
     * presence re-derived from the new grant.
     */
    void refreshRegistrations(RealtimeSession session, ClientRecord recorded) {
        Context ctx;
        List<Registration> next;
        try {
            ctx = context();
            next = registrations(ctx, session.identity, Optional.of(recorded));
        } catch (RuntimeException e) {
            return;   // fail closed: the previous registrations stay; the next round repairs it
        }
        Set<String> keys = scopeKeys(ctx.schema(), next);
        // a steady client's rounds register what is registered: no presence lock, nothing to move
        if (next.equals(session.registrations()) && keys.equals(session.scopeKeys())) return;
        long now = ctx.clock().nowMs();
        synchronized (presenceLock) {
            Set<String> before = session.scopeKeys();
            session.replaceRegistrations(next, keys);
            for (String key : before) if (!keys.contains(key)) leave(session, key, now);
            for (String key : keys) if (!before.contains(key)) snapshot(session, key, now);
        }
    }

    // ------------------------------------------------------------------ presence (§8.6)

    void publishPresence(RealtimeSession session, RealtimeControl.PresencePublish publish) {
        RealtimeSettings s = settings;
        if (!s.presenceEnabled()) return;
        String key = publish.scopeKey();
        long now = clockNow();
        synchronized (presenceLock) {
            if (!session.scopeKeys().contains(key)) {
                session.send(new RealtimeControl.PresenceError(key, RealtimeControl.PresenceError.FORBIDDEN, now));
                return;
            }
            if (publish.isLeave()) {
                leave(session, key, now);
                return;
            }
            if (publish.docJson().length() > s.maxPresenceBytes()) {
                session.send(new RealtimeControl.PresenceError(key, RealtimeControl.PresenceError.TOO_LARGE, now));
                return;
            }
            boolean join = presence.set(session.partition(), key, session, publish.doc());
            fanout(session, key, join ? RealtimeControl.PresenceKind.JOIN : RealtimeControl.PresenceKind.UPDATE,
                    publish.doc(), now);
        }
    }

    /** Caller holds {@link #presenceLock}. */
    private void leave(RealtimeSession session, String key, long now) {
        if (presence.clear(session.partition(), key, session)) {
            fanout(session, key, RealtimeControl.PresenceKind.LEAVE, null, now);
        }
    }

    /** §8.6.4 snapshot: joins of the peers already present, to this session only. Caller holds the lock. */
    private void snapshot(RealtimeSession session, String key, long now) {
        for (Map.Entry<RealtimeSession, Map<String, Object>> peer
                : presence.snapshot(session.partition(), key, session)) {
            session.send(new RealtimeControl.PresenceFanout(key, RealtimeControl.PresenceKind.JOIN,
                    peer.getKey().actorId(), peer.getKey().clientId, peer.getValue(), now));
        }
    }

    /** §8.6.3: to every OTHER session of the partition that itself holds the key. Caller holds the lock. */
    private void fanout(RealtimeSession origin, String key, RealtimeControl.PresenceKind kind,
                        Map<String, Object> doc, long now) {
        Set<RealtimeSession> sessions = byPartition.get(origin.partition());
        if (sessions == null) return;
        String json = new RealtimeControl.PresenceFanout(key, kind, origin.actorId(), origin.clientId, doc, now)
                .toJson();
        for (RealtimeSession s : new HashSet<>(sessions)) {
            if (s != origin && s.scopeKeys().contains(key)) s.sendText(json);
        }
    }
}

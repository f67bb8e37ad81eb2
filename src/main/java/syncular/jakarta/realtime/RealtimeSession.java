package syncular.jakarta.realtime;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;
import syncular.jakarta.sync.RequestOutcome;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.DecodeException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.MessageScanner;
import syncular.jakarta.wire.RealtimeControl;
import syncular.jakarta.wire.RequestDecoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseEncoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.WireVersion;

/**
 * One realtime connection (SPEC §8): its registrations (§8.1), the cursor it acknowledged and the contiguity rule of
 * deltas (§8.2: while the client is behind, {@code catchup-required} wakes instead of deltas until an ack reaches the
 * highest commitSeq seen), the socket round in flight (§8.7) and its outbox. State is guarded by {@code this}; sends
 * never happen under the lock for longer than a queue insertion.
 */
public final class RealtimeSession {
    private static final System.Logger LOG = System.getLogger(RealtimeSession.class.getName());
    static final int PROTOCOL_ERROR = 1002;
    static final int GOING_AWAY = 1001;
    static final int POLICY_VIOLATION = 1008;
    static final int TRY_AGAIN_LATER = 1013;
    static final int SERVICE_RESTART = 1012;
    /** Response chunks on the socket (§8.7 leaves the split to the server). */
    static final int ROUND_CHUNK_BYTES = 64 * 1024;
    /** How long a round's END waits for the commit feed to bring back the round's own commits (see round()). */
    static final long OWN_COMMIT_WAIT_MS = 250;
    /** How soon after the attach the socket's first round starts from the attach's preamble (see round()). */
    public static final long ATTACH_READ_REUSE_MS = 1_000;

    final String sessionId = UUID.randomUUID().toString();
    final Identity identity;
    final String clientId;
    final String logEpoch;
    private final RealtimeHub hub;
    private final SocketChannel channel;
    private final Outbox outbox;

    private int wireVersion;
    private long cursor;
    private long lastKnownSeq;
    private boolean wakePending;
    private List<Registration> registrations;
    private Set<String> scopeKeys;
    private MessageScanner scanner;
    private boolean roundInFlight;
    private volatile boolean closed;
    /** Monotonic ms (the hub's ticker) of the last inbound message or pong: the idle timeout's clock. */
    private volatile long lastInboundTick;
    /** When the unfinished round in {@link #scanner} got its first chunk (ticker ms). */
    private long roundStartedTick;
    /** §8.6 publish budget: a token bucket of {@code presencePerSecond}, refilled continuously. */
    private double presenceTokens = -1;
    private long presenceRefillTick;
    /** The cursor the client record is known to hold, an ack waiting for the interval, and the last write. */
    private long storedCursor;
    private long pendingAck = -1;
    private long lastAckWriteTick = Long.MIN_VALUE / 2;
    private final long openedTick;
    /** The attach's preamble, until the first round takes it (issue 15). */
    private RequestPreamble attachRead;

    RealtimeSession(RealtimeHub hub, Identity identity, String clientId, String logEpoch, int wireVersion, long cursor,
                    long latestSeq, List<Registration> registrations, Set<String> scopeKeys, SocketChannel channel,
                    RealtimeSettings settings, RequestPreamble attachRead) {
        this.hub = hub;
        this.identity = identity;
        this.clientId = clientId;
        this.logEpoch = logEpoch;
        this.wireVersion = wireVersion;
        this.cursor = cursor;
        this.lastKnownSeq = latestSeq;
        this.wakePending = cursor < latestSeq;
        this.registrations = List.copyOf(registrations);
        this.scopeKeys = Set.copyOf(scopeKeys);
        this.channel = channel;
        this.outbox = new Outbox(channel, settings.outboxMaxBytes(), settings.outboxMaxMessages());
        this.storedCursor = cursor;
        this.lastInboundTick = hub.tick();
        this.openedTick = lastInboundTick;
        this.attachRead = attachRead;
    }

    /** The hub's tick when the session attached (how long a closed socket lived). */
    long openedTick() { return openedTick; }

    public String sessionId() { return sessionId; }

    public String partition() { return identity.partition(); }

    public String actorId() { return identity.actorId(); }

    public String clientId() { return clientId; }

    synchronized Set<String> scopeKeys() { return scopeKeys; }

    public synchronized List<Registration> registrations() { return registrations; }

    synchronized boolean wakePending() { return wakePending; }

    // ------------------------------------------------------------------ inbound

    /** A text frame: an ack (§8.2) or a presence publish (§8.6.2); anything else is ignored (REF). */
    public void onText(String text) {
        if (!inbound()) return;
        Optional<RealtimeControl.Message> message;
        try {
            message = RealtimeControl.parseClientMessage(text);
        } catch (DecodeException e) {
            // a known event with malformed data: a broken client, dropped loudly (§8.1)
            violation(e.code().wire());
            return;
        }
        if (message.isEmpty()) return;
        if (message.get() instanceof RealtimeControl.Ack ack) {
            ack(ack.cursor());
        } else if (message.get() instanceof RealtimeControl.PresencePublish publish) {
            if (!presenceAllowed()) {
                // the §8.6.2 error set is closed (too_large, forbidden): a flood has no in-band answer, so it ends
                // the connection with the catalog's retryable code
                close(TRY_AGAIN_LATER, ErrorCode.SYNC_RATE_LIMITED.wire());
                return;
            }
            hub.publishPresence(this, publish);
        }
    }

    /** A binary frame: a {@code 0x01} chunk of the next sync round (§8.7). */
    public void onBinary(byte[] frame) {
        if (!inbound()) return;
        if (frame.length == 0) return;
        if ((frame[0] & 0xff) != RealtimeControl.TAG_ROUND) {
            violation("unexpected channel tag");
            return;
        }
        byte[] request = null;
        String violation = null;
        // violations close outside the lock: closing takes the hub's presence lock, which is taken before ours
        synchronized (this) {
            if (closed) return;
            if (roundInFlight) {
                violation = "pipelined sync round";   // §8.7 one round in flight: never process, drop (REF)
            } else {
                if (scanner == null) {
                    // what one socket may pin for a round it has not finished: the smaller of the HTTP body cap and
                    // the realtime round cap (a round past it closes: sync.invalid_request)
                    scanner = new MessageScanner(Math.min(hub.maxRequestBytes(), hub.settings().maxRoundBytes()));
                    roundStartedTick = hub.tick();
                }
                try {
                    Optional<MessageScanner.Scanned> done = scanner.feed(frame, 1, frame.length - 1);
                    if (done.isPresent()) {
                        scanner = null;
                        if (done.get().excess() > 0) {
                            violation = "request bytes past END";
                        } else {
                            request = done.get().message();
                            roundInFlight = true;
                            int requested = (request[4] & 0xff) | (request[5] & 0xff) << 8;
                            if (WireVersion.isSupported(requested)) wireVersion = requested;
                        }
                    }
                } catch (DecodeException e) {
                    scanner = null;
                    violation = e.code().wire();   // an unframed stream has no findable end
                }
            }
        }
        if (violation != null) {
            violation(violation);
            return;
        }
        if (request == null) return;
        hub.runRound(this, request);
    }

    /**
     * §8.2: the ack advances the session cursor and the client's cursor record. The record is written only for an
     * ack past what it is known to hold, and at most once per {@code ackIntervalMs} (a faster ack waits for the
     * interval, see {@link #sweep}): ack floods cost no database statements.
     */
    void ack(long acked) {
        long write;
        synchronized (this) {
            cursor = Math.max(cursor, acked);
            if (cursor >= lastKnownSeq) wakePending = false;
            if (acked <= storedCursor || acked <= pendingAck) return;
            long tick = hub.tick();
            if (tick - lastAckWriteTick < hub.settings().ackIntervalMs()) {
                pendingAck = acked;
                return;
            }
            write = acked;
            pendingAck = -1;
            lastAckWriteTick = tick;
        }
        persist(write);
    }

    private void persist(long acked) {
        long stored = hub.persistCursor(this, acked);
        synchronized (this) {
            storedCursor = Math.max(storedCursor, stored);
        }
    }

    /** An ack held back by the interval, if its time has come; the caller persists it. −1 = none. */
    private synchronized long duePendingAck(long tick) {
        if (pendingAck <= storedCursor || tick - lastAckWriteTick < hub.settings().ackIntervalMs()) return -1;
        long due = pendingAck;
        pendingAck = -1;
        lastAckWriteTick = tick;
        return due;
    }

    /** An ack still held back by the interval when the socket goes: written off the closing thread. */
    private void flushAck() {
        long due;
        synchronized (this) {
            due = pendingAck > storedCursor ? pendingAck : -1;
            pendingAck = -1;
        }
        if (due >= 0) hub.persistLater(this, due);
    }

    // ------------------------------------------------------------------ limits

    /**
     * Every inbound message: the idle clock restarts, and a socket whose credential lapsed acts no more (closed
     * 1008 {@code sync.auth_required}, as the upgrade would be refused now). False = drop the message.
     */
    private boolean inbound() {
        if (closed) return false;
        lastInboundTick = hub.tick();
        if (identity.expiredAt(hub.now())) {
            close(POLICY_VIOLATION, ErrorCode.SYNC_AUTH_REQUIRED.wire());
            return false;
        }
        return true;
    }

    /** A pong (or any other frame the container reports): the peer is alive. */
    public void onPong() { lastInboundTick = hub.tick(); }

    private synchronized boolean presenceAllowed() {
        int rate = hub.settings().presencePerSecond();
        long tick = hub.tick();
        if (presenceTokens < 0) {
            presenceTokens = rate;
        } else {
            presenceTokens = Math.min(rate, presenceTokens + (tick - presenceRefillTick) * rate / 1000.0);
        }
        presenceRefillTick = tick;
        if (presenceTokens < 1) return false;
        presenceTokens -= 1;
        return true;
    }

    /**
     * The periodic check (the hub's sweep): a lapsed credential closes 1008 {@code sync.auth_required}, a socket
     * silent past the idle timeout 1001, a round left unfinished past its timeout 1002; a held-back ack is written;
     * an attach's preamble no round took in time is let go (a socket that only listens keeps no copy of its record).
     */
    void sweep(long nowMs, long tick) {
        if (closed) return;
        RealtimeSettings settings = hub.settings();
        if (identity.expiredAt(nowMs)) {
            close(POLICY_VIOLATION, ErrorCode.SYNC_AUTH_REQUIRED.wire());
            return;
        }
        if (settings.idleTimeoutMs() > 0 && tick - lastInboundTick > settings.idleTimeoutMs()) {
            close(GOING_AWAY, "idle timeout");
            return;
        }
        boolean stale;
        synchronized (this) {
            stale = scanner != null && tick - roundStartedTick > settings.roundTimeoutMs();
            if (stale) scanner = null;
            if (tick - openedTick > ATTACH_READ_REUSE_MS) attachRead = null;
        }
        if (stale) {
            violation("unfinished sync round");
            return;
        }
        long due = duePendingAck(tick);
        if (due >= 0) persist(due);
    }

    /** §8.5: a WebSocket ping goes out with each heartbeat while the socket is otherwise idle. */
    void ping() { outbox.offerPing(); }

    // ------------------------------------------------------------------ rounds

    /** Drives the one handler and streams the response back as {@code 0x01} chunks (§8.7). */
    void round(SyncHandler handler, byte[] requestBytes) {
        if (closed) return;
        if (identity.expiredAt(hub.now())) {
            // the credential lapsed while the round waited for a thread: never apply it
            close(POLICY_VIOLATION, ErrorCode.SYNC_AUTH_REQUIRED.wire());
            return;
        }
        if (!outbox.admitsRound(0)) {
            close(TRY_AGAIN_LATER, "slow consumer");   // the previous answers are still queued: do not apply this one
            return;
        }
        // issue 15: the first round, sent right after hello, starts from the attach's preamble (one round trip
        // less per reconnect) while that preamble's log head is still the newest this socket has heard of
        RequestPreamble attached = takeAttachRead();
        byte[] response;
        // the client record the round stored with a pull: its subscriptions are what the socket registers (§8.7)
        Optional<ClientRecord> registering = Optional.empty();
        int wire;
        synchronized (this) {
            wire = wireVersion;
        }
        long started = System.nanoTime();
        RequestOutcome outcome = RequestOutcome.OK;
        int pushCommits = 0;
        boolean pulled = false;
        try {
            RequestMessage request = RequestDecoder.decode(requestBytes);
            pushCommits = request.pushCommits().size();
            pulled = request.pullHeader().isPresent();
            if (!request.header().clientId().equals(clientId)) {
                throw new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID,
                        "socket round clientId must match the connection (§8.7)");
            }
            SyncHandler.Handled handled = attached == null ? handler.handle(identity, request)
                    : handler.handle(identity, request, attached);
            response = ResponseEncoder.encode(handled.response());
            if (request.pullHeader().isPresent() && !endsWithError(handled.response())) {
                registering = handled.recorded();
            }
            awaitOwnCommits(handled.appliedCommitSeqs());
        } catch (RuntimeException e) {
            response = errorResponse(e, wire);
            outcome = RequestOutcome.of(e);
        }
        hub.events().emit(new ServerEvent.RequestHandled(hub.now(), partition(), identity.actorId(), clientId,
                "socket", System.nanoTime() - started, requestBytes.length, response.length,
                outcome.outcome(), outcome.errorCode(), pushCommits, pulled));
        List<ByteBuffer> chunks = new ArrayList<>();
        for (int off = 0; off < response.length; off += ROUND_CHUNK_BYTES) {
            int n = Math.min(ROUND_CHUNK_BYTES, response.length - off);
            ByteBuffer b = ByteBuffer.allocate(n + 1);
            b.put((byte) RealtimeControl.TAG_ROUND).put(response, off, n).flip();
            chunks.add(b);
        }
        if (!outbox.admitsRound(response.length)) {
            // an earlier response is still queued and this one does not fit beside it: the client sends rounds but
            // does not read their answers
            close(TRY_AGAIN_LATER, "slow consumer");
            return;
        }
        for (int i = 0; i < chunks.size() - 1; i++) outbox.offerRound(chunks.get(i));
        synchronized (this) {
            // the round ends when the chunk carrying END is handed over: the client may start its next round as
            // soon as END arrives, which must not look pipelined (§8.7 rule 3)
            roundInFlight = false;
            outbox.offerRound(chunks.get(chunks.size() - 1));
        }
        registering.ifPresent(record -> hub.refreshRegistrations(this, record));
    }

    /**
     * The attach's preamble for the first round, if it starts within {@link #ATTACH_READ_REUSE_MS}; then gone. A
     * commit past the preamble's log head that reached this socket since (a client woken for one pulls it in this
     * round) becomes the round's log head: the commit feed announces a commit only once it is committed, and commit
     * numbers are taken under the partition's push lock, held to commit, so every commit up to an announced one is
     * visible to the round's reads.
     */
    private synchronized RequestPreamble takeAttachRead() {
        RequestPreamble read = attachRead;
        attachRead = null;
        if (read == null || hub.tick() - openedTick > ATTACH_READ_REUSE_MS) return null;
        if (lastKnownSeq <= read.maxCommitSeq()) return read;
        return new RequestPreamble(read.registry(), read.gate(), read.gateSchemaVersion(), read.clientRecord(),
                lastKnownSeq, read.horizonSeq());
    }

    /**
     * §8.7 interleaving: a commit that reaches this connection while its round is in flight takes the §8.2
     * suppression path (a {@code catchup-required} wake, deltas paused until an ack covers it). The round's own push
     * commits always happen during the round, but the commit feed (LISTEN/NOTIFY) brings them back asynchronously, so
     * without this they could arrive just after END and go out as a standalone delta of the client's own write. The
     * round therefore holds its END until the feed has shown this session every commit the round applied (bounded:
     * a feed that is down or slow costs at most {@link #OWN_COMMIT_WAIT_MS}, and its catch-up wakes the session
     * anyway). Only when the session has registrations: otherwise nothing could be fanned out to it.
     */
    private void awaitOwnCommits(List<Long> applied) {
        if (applied.isEmpty()) return;
        long own = java.util.Collections.max(applied);
        long deadline = System.nanoTime() + OWN_COMMIT_WAIT_MS * 1_000_000;
        synchronized (this) {
            while (!closed && !registrations.isEmpty() && lastKnownSeq < own) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) return;
                try {
                    wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static boolean endsWithError(ResponseMessage response) {
        List<ResponseFrame> frames = response.frames();
        return !frames.isEmpty() && frames.get(frames.size() - 1) instanceof ErrorFrame;
    }

    /** §8.7: what HTTP reports as status + JSON is RESP_HEADER ERROR END on the socket. */
    private byte[] errorResponse(RuntimeException failure, int wire) {
        ErrorFrame error;
        SyncException sync = SyncException.in(failure);
        if (sync != null) {
            error = ErrorFrame.of(sync.code(), sync.getMessage(), sync.detailsJson());
        } else if (failure instanceof DecodeException d) {
            error = ErrorFrame.of(d.code(), d.getMessage(), null);
        } else {
            LOG.log(Level.ERROR, "socket sync round failed unexpectedly", failure);
            error = ErrorFrame.of(ErrorCode.SYNC_INTERNAL_ERROR, "the server failed unexpectedly; retry later", null);
        }
        RespHeader header = WireVersion.hasLogEpoch(wire) ? RespHeader.v2(null, null, logEpoch, false)
                : RespHeader.v1(null, null);
        return ResponseEncoder.encode(new ResponseMessage(wire, List.of(header, error)));
    }

    // ------------------------------------------------------------------ fanout

    /**
     * What a delta's bytes depend on besides the commit: the wire version, the log epoch and the registrations
     * (ids, tables, effective scopes). Sessions with equal keys get the same bytes for a commit.
     */
    static final class DeltaKey {
        private final int wireVersion;
        private final String logEpoch;
        private final List<Registration> registrations;
        /** Computed once: a commit's fanout looks the key up once per session (the registrations hash deeply). */
        private final int hash;

        DeltaKey(int wireVersion, String logEpoch, List<Registration> registrations) {
            this.wireVersion = wireVersion;
            this.logEpoch = logEpoch;
            this.registrations = registrations;
            this.hash = Objects.hash(wireVersion, logEpoch, registrations);
        }

        @Override
        public boolean equals(Object o) {
            return this == o || o instanceof DeltaKey k && hash == k.hash && wireVersion == k.wireVersion
                    && Objects.equals(logEpoch, k.logEpoch) && registrations.equals(k.registrations);
        }

        @Override
        public int hashCode() { return hash; }
    }

    /**
     * This session's current {@link DeltaKey}, built at its first delta; rebuilt after a round changed the
     * registrations (null then) or the wire version. Guarded by {@code this}.
     */
    private DeltaKey deltaKey;

    /** Stands for "no registration of this key matches the commit": nothing to send. */
    private static final byte[] NO_DELTA = new byte[0];

    /**
     * Called by the hub for every commit of the partition, in commitSeq order (§8.2). {@code encoded}: this commit's
     * tagged delta bytes by {@link DeltaKey}, shared by the hub across its sessions, so a delta is filtered and
     * encoded once per distinct key, not once per socket (issue 15); each session sends its own buffer over the
     * shared, never written, array.
     */
    void deliver(StoredCommit commit, int maxDeltaBytes, long nowMs, Map<DeltaKey, byte[]> encoded) {
        synchronized (this) {
            if (closed) return;
            lastKnownSeq = Math.max(lastKnownSeq, commit.commitSeq());
            notifyAll();   // a round waiting for its own commits (awaitOwnCommits)
            if (commit.commitSeq() <= cursor) return;   // the client already has it (pulled or acked)
            if (deltaKey == null || deltaKey.wireVersion != wireVersion) {
                deltaKey = new DeltaKey(wireVersion, logEpoch, registrations);
            }
            byte[] delta = encoded.computeIfAbsent(deltaKey, k -> encodeDelta(commit));
            if (delta == NO_DELTA) return;
            if (roundInFlight || wakePending) {
                // §8.7: no delta inside a round's stream; §8.2: deltas must be cursor-contiguous
                wake(RealtimeControl.WakeReason.CATCHUP_REQUIRED, nowMs);
                return;
            }
            if (delta.length - 1 > maxDeltaBytes) {
                wake(RealtimeControl.WakeReason.DELTA_TOO_LARGE, nowMs);
                return;
            }
            if (!outbox.offerDelta(ByteBuffer.wrap(delta))) {
                // too far behind: a bounded queue, and the client pulls what it missed
                hub.events().emit(new ServerEvent.SlowConsumer(nowMs, partition(), identity.actorId(), clientId,
                        sessionId, commit.commitSeq()));
                wake(RealtimeControl.WakeReason.CATCHUP_REQUIRED, nowMs);
                return;
            }
            cursor = commit.commitSeq();
        }
    }

    /** The tagged delta message of {@code commit} for this session's key, or {@link #NO_DELTA}. */
    private byte[] encodeDelta(StoredCommit commit) {
        List<ResponseFrame> frames = sections(commit);
        if (frames == null) return NO_DELTA;
        RespHeader header = WireVersion.hasLogEpoch(wireVersion) ? RespHeader.v2(null, null, logEpoch, false)
                : RespHeader.v1(null, null);
        frames.add(0, header);
        byte[] bytes = ResponseEncoder.encode(new ResponseMessage(wireVersion, frames));
        byte[] tagged = new byte[bytes.length + 1];
        tagged[0] = (byte) RealtimeControl.TAG_DELTA;
        System.arraycopy(bytes, 0, tagged, 1, bytes.length);
        return tagged;
    }

    /** SUB_START COMMIT SUB_END per registration with matching changes (REF: one commit per delta), or null. */
    private List<ResponseFrame> sections(StoredCommit commit) {
        List<ResponseFrame> frames = null;
        for (Registration r : registrations) {
            ScopeFilter filter = new ScopeFilter(r.effective());
            List<CommitFrame.Change> changes = new ArrayList<>();
            for (StoredChange c : commit.changes()) {
                if (!c.table().equals(r.table()) || !filter.matches(c.scopes())) continue;
                changes.add(c.op() == ChangeOp.UPSERT
                        ? CommitFrame.Change.upsert(0, c.rowId(), c.rowVersion(), c.scopes(), c.payload())
                        : CommitFrame.Change.delete(0, c.rowId(), c.scopes()));
            }
            if (changes.isEmpty()) continue;
            if (frames == null) frames = new ArrayList<>();
            frames.add(SubStart.active(r.id(), r.effective(), false));
            frames.add(new CommitFrame(commit.commitSeq(), commit.createdAtMs(), commit.actorId(), List.of(r.table()),
                    changes));
            frames.add(new SubEnd(commit.commitSeq(), null));
        }
        return frames;
    }

    /** Commits up to {@code throughSeq} went by unseen (a gap of the feed): the client must pull. */
    void missed(long throughSeq, long nowMs) {
        synchronized (this) {
            if (closed) return;
            lastKnownSeq = Math.max(lastKnownSeq, throughSeq);
            notifyAll();   // a round waiting for its own commits (awaitOwnCommits)
            if (registrations.isEmpty() || cursor >= throughSeq) return;
            wake(RealtimeControl.WakeReason.CATCHUP_REQUIRED, nowMs);
        }
    }

    /**
     * §8.3 {@code reset-required}: the log was pruned past this session's cursor, so its next pull answers
     * {@code reset} (§4.6) — a server-declared discontinuity the client should meet now rather than at its next
     * scheduled pull. A session that never synced (cursor −1) bootstraps anyway and is not woken.
     */
    void behindHorizon(long horizonSeq, long nowMs) {
        synchronized (this) {
            if (closed || registrations.isEmpty() || cursor < 0 || cursor >= horizonSeq) return;
            wake(RealtimeControl.WakeReason.RESET_REQUIRED, nowMs);
        }
    }

    /** §8.3; sets the suppression until an ack catches up. Caller holds the lock or does not need it. */
    synchronized void wake(RealtimeControl.WakeReason reason, long nowMs) {
        wakePending = true;
        outbox.offerWake(new RealtimeControl.SyncWake(lastKnownSeq, reason, nowMs).toJson());
    }

    synchronized void replaceRegistrations(List<Registration> next, Set<String> keys) {
        registrations = List.copyOf(next);
        deltaKey = null;
        scopeKeys = Set.copyOf(keys);
    }

    // ------------------------------------------------------------------ sending, closing

    void sendText(String json) { outbox.offerText(json); }

    void send(RealtimeControl.Message message) { outbox.offerText(message.toJson()); }

    /** §8.7 violations: drop the connection loudly; there is no error channel for them. */
    void violation(String reason) {
        LOG.log(Level.DEBUG, () -> "closing realtime session " + sessionId + ": " + reason);
        close(PROTOCOL_ERROR, reason);
    }

    /** Closes the socket and unregisters (idempotent). */
    public void close(int code, String reason) {
        if (closed) return;
        closed = true;
        outbox.close();
        hub.disconnect(this, code, reason);
        flushAck();
        try {
            channel.close(code, reason.length() > 120 ? reason.substring(0, 120) : reason);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "closing a realtime socket failed", e);
        }
    }

    /** The socket closed on its own (with the peer's or the container's close {@code code}): unregister. */
    public void closed(int code) {
        if (closed) return;
        closed = true;
        outbox.close();
        hub.disconnect(this, code, "closed by the peer or the container");
        flushAck();
    }

    /** The client record the ack may advance: same actor (§1.5) and same log epoch (§2.1). */
    boolean owns(ClientRecord record, Optional<String> currentEpoch) {
        return record.actorId().equals(identity.actorId()) && currentEpoch.map(logEpoch::equals).orElse(false);
    }
}

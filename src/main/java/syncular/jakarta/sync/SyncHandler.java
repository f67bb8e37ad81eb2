package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.AuthorityUnavailable;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.ClientSubscription;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.RequestEnd;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.UnitTransactions;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.Lease;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.Subscription;
import syncular.jakarta.wire.WireVersion;

/**
 * The one handler behind {@code POST /sync} and socket rounds (SPEC §1.1, seeds/002 handler.js
 * {@code createStreamCore}): ensureSchema → touch the partition registry → serve gate → request validation in the
 * reference order → push → pull → client record, built whole; then the gate is re-read and the response refused if
 * it changed (read-verify-refuse, RFC 0007). Request-level failures before RESP_HEADER throw {@link SyncException};
 * after it they end the body with ERROR + END.
 */
public final class SyncHandler {
    private final ServerStorage storage;
    private final Supplier<CompiledSchema> schema;
    private final Supplier<List<CheckpointDeclaration>> declarations;
    private final ScopeResolver resolver;
    private final Clock clock;
    private final SyncSettings settings;
    private final PushProcessor push;
    private final RecentCommits recent;
    private final PullProcessor pull;
    private final PartitionAdmission admission;
    private final Leases leases;
    private final ServerEvents events;

    /**
     * {@code validation}: the host's §6.7/§6.8 validators, run inside each push commit's transaction; {@code leases}:
     * the §7.3 auth leases, or {@link Leases#OFF}.
     */
    public SyncHandler(ServerStorage storage, Supplier<CompiledSchema> schema,
                       Supplier<List<CheckpointDeclaration>> declarations, ScopeResolver resolver, Clock clock,
                       SyncSettings settings, PullProcessor.SegmentPublisher segments, Validation validation,
                       Leases leases) {
        this(storage, UnitTransactions.of(storage), schema, declarations, resolver, clock, settings, segments,
                validation, leases, null, ServerEvents.NONE);
    }

    /**
     * {@code units}: where each push group gets its transaction (in the container, {@code web.PushGroups});
     * {@code blobs}: the §5.9 blob store a push's blob references must name blobs of, null when there is none;
     * {@code events}: where each handled request's push and pull events go (issue 20).
     */
    public SyncHandler(ServerStorage storage, UnitTransactions units, Supplier<CompiledSchema> schema,
                       Supplier<List<CheckpointDeclaration>> declarations, ScopeResolver resolver, Clock clock,
                       SyncSettings settings, PullProcessor.SegmentPublisher segments, Validation validation,
                       Leases leases, syncular.jakarta.storage.BlobStore blobs, ServerEvents events) {
        this.events = events;
        this.admission = new PartitionAdmission(settings.admission());
        this.leases = leases;
        this.storage = storage;
        this.schema = schema;
        this.declarations = declarations;
        this.resolver = resolver;
        this.clock = clock;
        this.settings = settings;
        this.push = new PushProcessor(units, clock, validation, settings.maxCascadeOperationsPerCommit(), blobs);
        this.recent = new RecentCommits(settings.recentCommitBytes());
        this.pull = new PullProcessor(segments, settings.pageCacheBytes(), recent);
    }

    /**
     * What a handled request produced: the response, the commits it applied (for realtime fanout), and the client
     * record it stored with the serve-gate re-read (empty for a response that records nothing; a socket round
     * registers that record's subscriptions, §8.7).
     */
    public record Handled(ResponseMessage response, List<Long> appliedCommitSeqs, Optional<ClientRecord> recorded) { }

    /** The log's recent tail this handler's pulls read windows from; the realtime hub feeds it what it fans out. */
    public RecentCommits recentCommits() { return recent; }

    public Handled handle(Identity identity, RequestMessage request) {
        return handle(identity, request, Optional.empty());
    }

    /**
     * A socket's first round (issue 15): {@code attached} is the preamble its WebSocket attach read moments before
     * for the same client, with the log head; the round starts from it instead of its own round trip, if its gate was
     * read for the schema version still running. The caller hands it over only while no commit past its log head
     * is known; one that lands unheard meanwhile reaches the socket as a delta or a wake (§8.2, §8.7), as when a
     * commit lands after any round's preamble.
     */
    public Handled handle(Identity identity, RequestMessage request, RequestPreamble attached) {
        return handle(identity, request, Optional.of(attached));
    }

    private Handled handle(Identity identity, RequestMessage request, Optional<RequestPreamble> attached) {
        try (StorageSession session = storage.openSession(identity.partition())) {
            Built built = StorableInput.refusalsAsInvalidRequest(() -> build(session, identity, request, attached));
            verify(session, built);
            RequestEvents.emit(events, clock.nowMs(), identity, request, built.handled().response());
            return built.handled();
        }
    }

    /** A handled request whose response was materialized (encoded, spooled) before the serve-gate re-read. */
    public record Materialized<T>(Handled handled, T body) { }

    /**
     * {@link #handle(Identity, RequestMessage)}, with {@code materialize} run on the built response BEFORE the
     * serve-gate re-read (ARCHITECTURE step 6: build, re-read, only then send): the HTTP resource encodes and spools
     * the body there, so what is verified is exactly what is sent. When the re-read refuses, the body is closed.
     */
    public <T extends AutoCloseable> Materialized<T> handle(Identity identity, RequestMessage request,
                                                            Function<ResponseMessage, T> materialize) {
        try (StorageSession session = storage.openSession(identity.partition())) {
            Built built = StorableInput.refusalsAsInvalidRequest(() -> build(session, identity, request,
                    Optional.empty()));
            T body = materialize.apply(built.handled().response());
            try {
                verify(session, built);
            } catch (RuntimeException e) {
                try {
                    body.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
            RequestEvents.emit(events, clock.nowMs(), identity, request, built.handled().response());
            return new Materialized<>(built.handled(), body);
        }
    }

    /** A response built but not yet verified by the serve-gate re-read. */
    private record Built(ServeGate entryGate, CompiledSchema running, List<CheckpointDeclaration> declared,
                         Handled handled, Optional<ServeGate> endGate) { }

    /**
     * Round trips (issue 14): the preamble (touch, gate, client record, stored results, log head) in one; the push
     * group's lock, one per commit and COMMIT, shared by every request of the group; a commit-window page per
     * subscription; the client record with the gate re-read in one. That last one rides on the last subscription's
     * window page when the window is the rest of the log ({@link RequestEnd}): an incremental pull is two round
     * trips, and a socket's first one a single round trip after its attach's. The session's connection goes back to
     * the pool while the request waits for its push group.
     */
    private Built build(StorageSession session, Identity identity, RequestMessage request,
                        Optional<RequestPreamble> attached) {
        CompiledSchema running = schema.get();
        List<CheckpointDeclaration> declared = declarations.get();
        String partition = identity.partition();
        ensureSchema(running, declared, partition);

        int wire = request.wireVersion();
        ReqHeader header = request.header();
        List<PushCommit> pushes = request.pushCommits();
        Optional<PullHeader> pullHeader = request.pullHeader();
        List<Subscription> subscriptions = request.subscriptions();

        // a clientId the database cannot hold is not looked up (it would fail the query); checkRequest refuses it below
        String clientId = StorableInput.keyProblem(header.clientId()) == null ? header.clientId() : "";
        RequestPreamble pre = attached.filter(a -> a.gateSchemaVersion() == running.version()).map(session::adopt)
                .orElseGet(() -> session.preamble(clock.nowMs(), UUID.randomUUID().toString(), running.version(),
                        clientId, pushes.isEmpty()));
        PartitionRegistryEntry registry = pre.registry();
        ServeGate entryGate = pre.gate();
        ServeGatePolicy.enforce(entryGate, running.version(), declared);

        if (wire == WireVersion.V1 && registry.epochRequired()) {
            throw new SyncException(ErrorCode.SYNC_CLIENT_WIRE_UNSUPPORTED,
                    "this partition requires a client that validates log epochs (§2.1)");
        }
        boolean epochAware = WireVersion.hasLogEpoch(wire);
        if (epochAware && header.logEpoch() == null && !pushes.isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                    "epoch acquisition requests must not carry push commits (§2.1)");
        }
        boolean epochReset = epochAware && !registry.logEpoch().equals(header.logEpoch());
        List<ResponseFrame> frames = new ArrayList<>();
        if (header.schemaVersion() != running.version()) {
            // §2.4 / §7.4: no degraded encoding; the schema-floor response, nothing else.
            frames.add(respHeader(wire, running.version(), running.version(), registry.logEpoch(), epochReset));
            return built(entryGate, running, declared, wire, frames, List.of(), Optional.empty(), Optional.empty());
        }
        if (epochReset) {
            frames.add(respHeader(wire, null, running.version(), registry.logEpoch(), true));
            return built(entryGate, running, declared, wire, frames, List.of(), Optional.empty(), Optional.empty());
        }
        StorableInput.checkRequest(request);   // before any read binds another request field
        Optional<ClientRecord> previous = validateRequest(identity, pre.clientRecord(), header, pushes, pullHeader,
                subscriptions, running);
        Resolution resolution = resolveOnce(identity, header.clientId(), running);
        Map<String, List<String>> allowed = resolution.allowed();
        List<PullProcessor.Plan> plans = new ArrayList<>();
        for (Subscription s : subscriptions) {
            TableSchema table = running.table(s.table()).orElseThrow();
            plans.add(new PullProcessor.Plan(s, table, Scopes.effective(s.scopes(), allowed)));
        }

        frames.add(respHeader(wire, null, running.version(), registry.logEpoch(), false));
        resolution.lease().ifPresent(frames::add);   // §7.3.2: right after RESP_HEADER
        List<Long> applied = new ArrayList<>();
        Optional<ClientRecord> record = Optional.empty();
        Optional<ServeGate> endGate = Optional.empty();
        try {
            long maxSeq = pre.maxCommitSeq();
            long horizon = pre.horizonSeq();
            if (!pushes.isEmpty()) {
                session.release();   // no connection held while the request waits for its group
                PushProcessor.Pushed pushed;
                // issue 13: a bounded number of one partition's requests wait for a push group at once; a refusal
                // is the in-band, retryable sync.rate_limited, nothing of this request pushed
                try (PartitionAdmission.Turn turn = admission.enter(partition)) {
                    pushed = push.push(new PushProcessor.Batch(
                            new PushProcessor.RequestScope(identity, header.clientId(), wire), running, allowed,
                            pushes, underLock -> ServeGatePolicy.verifyUnchanged(entryGate, underLock,
                                    running.version(), declared)));
                }
                // the log head and horizon under the lock, at this request's group (the pull reads through them)
                maxSeq = pushed.maxCommitSeq();
                horizon = pushed.horizonSeq();
                for (PushProcessor.Outcome outcome : pushed.outcomes()) {
                    frames.addAll(outcome.frames());
                    if (outcome.appliedCommitSeq() > 0) applied.add(outcome.appliedCommitSeq());
                }
                if (pushed.failure() != null) throw pushed.failure();
            }
            List<Long> cursors = new ArrayList<>();
            long now = clock.nowMs();
            Optional<ClientRecord> ended = Optional.empty();
            if (pullHeader.isPresent()) {
                PullLimits limits = PullLimits.clamp(pullHeader.get());
                PullProcessor.Budget budget = new PullProcessor.Budget(settings.maxResponseBytes());
                for (int p = 0; p < plans.size(); p++) {
                    PullProcessor.Plan plan = plans.get(p);
                    Optional<RequestEnd> end = Optional.empty();
                    if (p == plans.size() - 1) {
                        // the record this request stores if this last window is the rest of the log
                        List<Long> complete = new ArrayList<>(cursors);
                        complete.add(PullProcessor.completeCursor(plan.subscription(), maxSeq));
                        ended = Optional.of(clientRecord(identity, header.clientId(), previous, wire, true,
                                subscriptions, complete, now));
                        end = Optional.of(new RequestEnd(ended.get(), running.version()));
                    }
                    PullProcessor.Section section = pull.section(session, registry.logEpoch(), running, limits, plan,
                            maxSeq, horizon, settings.inlineSegmentMaxBytes(), budget, end);
                    frames.addAll(section.frames());
                    if (section.active()) cursors.add(section.nextCursor());
                    endGate = section.endGate();
                }
            }
            record = Optional.of(clientRecord(identity, header.clientId(), previous, wire, pullHeader.isPresent(),
                    subscriptions, cursors, now));
            // the stored end is this request's only if the window was not cut (a budget stop, a prune under it)
            if (!record.equals(ended)) endGate = Optional.empty();
        } catch (SyncException e) {
            // §1.6: in-band ERROR, then END, nothing else.
            frames.add(ErrorFrame.of(e.code(), e.getMessage(), e.detailsJson()));
            if (e.code() == ErrorCode.SYNC_SCHEMA_NOT_READY) throw e; // the gate refuses the whole response
            endGate = Optional.empty();
        }
        return built(entryGate, running, declared, wire, frames, applied, record, endGate);
    }

    private static Built built(ServeGate entryGate, CompiledSchema running, List<CheckpointDeclaration> declared,
                               int wire, List<ResponseFrame> frames, List<Long> applied,
                               Optional<ClientRecord> record, Optional<ServeGate> endGate) {
        return new Built(entryGate, running, declared, new Handled(new ResponseMessage(wire, frames), applied, record),
                endGate);
    }

    /**
     * Read-verify-refuse: the gate is re-read after the whole body is built (seeds/002 handler.js), in the round
     * trip that stores the client record, or, when the request's end rode on its last window read, read there after
     * the body's last read (nothing the body holds was read after it).
     */
    private void verify(StorageSession session, Built b) {
        int version = b.running().version();
        ServeGate exit;
        if (b.endGate().isPresent()) {
            exit = b.endGate().get();
        } else {
            Ended ended = ends.submit(version + ":" + session.partition(),
                    new End(session, session.recordToStore(b.handled().recorded()), version));
            if (ended.failure() != null) throw ended.failure();
            exit = ended.gate();
        }
        ServeGatePolicy.verifyUnchanged(b.entryGate(), exit, version, b.declared());
    }

    /** At most this many requests' ends are stored together. */
    static final int MAX_END_GROUP = 64;

    /**
     * A request's end that did not ride on its last read: its session and the record it stores (empty: none, or an
     * equal one is stored already).
     */
    private record End(StorageSession session, Optional<ClientRecord> record, int runningSchemaVersion) { }

    /** The gate read after a request's record was stored, or why its end failed. */
    private record Ended(ServeGate gate, RuntimeException failure) { }

    /**
     * A partition's request ends that queue while one is stored are stored together (issue 15): every record, then
     * one serve-gate read, in one round trip. Each body was built before its end queued, so the gate is read after
     * all of them, as read-verify-refuse asks. Lanes are per running schema version and partition (the version
     * first: the key splits at its first colon, whatever the partition holds). Up to {@value #END_GROUPS_AT_ONCE}
     * groups of a lane are stored at once: ends take no lock, and with one at a time the mixed soak's readers spent
     * over a third of their requests waiting for the group ahead of theirs.
     */
    private final GroupCommit<End, Ended> ends = new GroupCommit<>(MAX_END_GROUP, END_GROUPS_AT_ONCE, end -> 1,
            this::endTogether);
    /** How many groups of request ends of one lane are stored at once. */
    static final int END_GROUPS_AT_ONCE = 2;

    /**
     * On the leader's thread, whose end is the group's first ({@link GroupCommit}), on its session's connection. A
     * group that fails is stored again one end at a time, so what the database refuses fails its own request only.
     */
    private List<Ended> endTogether(String lane, List<End> group) {
        StorageSession leader = group.get(0).session();
        if (group.size() > 1) {
            List<ClientRecord> records = lastPerClient(group);
            try {
                return Collections.nCopies(group.size(), new Ended(leader.recordClientsThenReadGate(records,
                        group.get(0).runningSchemaVersion()), null));
            } catch (RuntimeException groupFailed) {
                // stored again one by one below: each failure reaches the request it belongs to
            }
        }
        List<Ended> each = new ArrayList<>(group.size());
        for (End end : group) {
            try {
                each.add(new Ended(leader.recordClientsThenReadGate(end.record().stream().toList(),
                        end.runningSchemaVersion()), null));
            } catch (RuntimeException e) {
                each.add(new Ended(null, e));
            }
        }
        return each;
    }

    /** One record per clientId: of two ends of one client in a group, the later one's, as if stored in turn. */
    private static List<ClientRecord> lastPerClient(List<End> group) {
        Map<String, ClientRecord> byClient = new LinkedHashMap<>();
        for (End end : group) {
            end.record().ifPresent(r -> {
                byClient.remove(r.clientId());
                byClient.put(r.clientId(), r);
            });
        }
        return List.copyOf(byClient.values());
    }

    private void ensureSchema(CompiledSchema running, List<CheckpointDeclaration> declared, String partition) {
        try {
            storage.ensureSchema(running, declared);
        } catch (StorageException e) {
            // seeds/002: an undeclared pending checkpoint or a newer database is the gate's business (503
            // schema_not_ready with its details); if the gate would serve after all, the raw error stands.
            if (e.code() == StorageErrorCode.CHECKPOINT_INCOMPLETE || e.code() == StorageErrorCode.STORED_SCHEMA_NEWER) {
                ServeGatePolicy.enforce(storage.readServeGate(partition, running.version()), running.version(), declared);
            }
            throw e;
        }
    }

    /**
     * SPEC-DIGEST §3.6 order, after the epoch and floor checks. Returns the client record it read, the request's one
     * read of it: {@link #recordClient} keeps what a pull does not replace from it (issue 14: it was read twice).
     */
    private Optional<ClientRecord> validateRequest(Identity identity, Optional<ClientRecord> record, ReqHeader header,
                                                   List<PushCommit> pushes, Optional<PullHeader> pullHeader,
                                                   List<Subscription> subscriptions, CompiledSchema running) {
        ClientIds.refuseReserved(header.clientId());
        if (record.isPresent() && !record.get().actorId().equals(identity.actorId())) {
            throw new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID,
                    "clientId is bound to a different actor in this partition (§1.5)");
        }
        long operations = pushes.stream().mapToLong(p -> p.operations().size()).sum();
        if (operations > settings.maxOperationsPerRequest()) {
            throw new SyncException(ErrorCode.SYNC_TOO_MANY_OPERATIONS, "the request carries " + operations
                    + " operations (cap " + settings.maxOperationsPerRequest() + ", §6.1)");
        }
        if (pullHeader.isPresent()
                && !pullHeader.get().accepts(PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS)) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                    "accept must include rows-segment support (bits 0 and 1, §4.2)");
        }
        if (subscriptions.size() > settings.maxSubscriptionsPerRequest()) {
            // no catalog code is specific to this cap (§4.1, §10.2 name none): a malformed request
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "the request carries " + subscriptions.size()
                    + " subscriptions (cap " + settings.maxSubscriptionsPerRequest() + ")");
        }
        Set<String> ids = new HashSet<>();
        for (Subscription s : subscriptions) {
            if (!ids.add(s.id())) {
                throw new SyncException(ErrorCode.SYNC_INVALID_SUBSCRIPTION, "duplicate subscription id (§4.1)");
            }
            TableSchema table = running.table(s.table()).orElseThrow(() -> new SyncException(
                    ErrorCode.SYNC_UNKNOWN_TABLE, "a subscription names a table this server does not have (§4.3)"));
            for (Map.Entry<String, List<String>> e : s.scopes().entrySet()) {
                if (table.scopeForVariable(e.getKey()).isEmpty()) {
                    throw new SyncException(ErrorCode.SYNC_INVALID_SUBSCRIPTION,
                            "a requested scope key is not declared by the subscription's table (§3.2)");
                }
                if (e.getValue().contains(Scopes.ANY)) {
                    throw new SyncException(ErrorCode.SYNC_INVALID_SUBSCRIPTION,
                            "the scope value '*' is reserved for allowed scopes (§3.2)");
                }
            }
        }
        return record;
    }

    /** The allowed scopes a request runs with (null: fail closed), and the LEASE frame it answers, if any. */
    private record Resolution(Map<String, List<String>> allowed, Optional<Lease> lease) { }

    /**
     * §3.2: one resolver call per request; a throw fails closed (null = revoke reads, forbid writes). §7.3.3: a live
     * answer issues or slides the client's lease; an outage signal authorizes against the stored lease (no refresh)
     * or fails the request with the lease error.
     */
    private Resolution resolveOnce(Identity identity, String clientId, CompiledSchema running) {
        Map<String, List<String>> allowed;
        try {
            allowed = resolver.resolveScopes(identity);
        } catch (AuthorityUnavailable outage) {
            Map<String, List<String>> leased = leases.authorize(identity, clientId, clock.nowMs());
            Scopes.checkResolvedKeys(leased, running);
            return new Resolution(leased, Optional.empty());
        } catch (RuntimeException e) {
            return new Resolution(null, Optional.empty());
        }
        if (allowed == null) return new Resolution(null, Optional.empty());
        Scopes.checkResolvedKeys(allowed, running);
        return new Resolution(allowed, leases.issue(identity, clientId, allowed, clock.nowMs()));
    }

    /** §4.5/§8.1: the cursor watermark, the subscription list and the wire version per (partition, clientId). */
    private static ClientRecord clientRecord(Identity identity, String clientId, Optional<ClientRecord> previous,
                                             int wire, boolean pulled, List<Subscription> subscriptions,
                                             List<Long> cursors, long nowMs) {
        List<ClientSubscription> subs = pulled
                ? subscriptions.stream().map(s -> new ClientSubscription(s.id(), s.table(), s.scopes())).toList()
                : previous.map(ClientRecord::subscriptions).orElse(List.of());
        long cursor = !cursors.isEmpty() ? cursors.stream().mapToLong(Long::longValue).min().getAsLong()
                : previous.map(ClientRecord::cursor).orElse(-1L);
        return new ClientRecord(clientId, identity.actorId(), wire, cursor, nowMs, subs);
    }

    private static RespHeader respHeader(int wire, Integer required, int latest, String logEpoch, boolean reset) {
        return WireVersion.hasLogEpoch(wire) ? RespHeader.v2(required, latest, logEpoch, reset)
                : RespHeader.v1(required, latest);
    }
}

package syncular.jakarta.web;

import jakarta.annotation.PreDestroy;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import syncular.jakarta.events.EventBus;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.Authenticator;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.RowValidator;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.JwtAuthenticator;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.migration.BackfillRunner;
import syncular.jakarta.migration.Declarations;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.AuditLog;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.postgres.PostgresAuditLog;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.TransactionRunner;
import syncular.jakarta.storage.SegmentPresigner;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.BlobPresigner;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.postgres.PostgresBlobStore;
import syncular.jakarta.storage.s3.S3BlobStore;
import syncular.jakarta.storage.s3.S3SegmentStore;
import syncular.jakarta.storage.s3.S3Settings;
import syncular.jakarta.sync.BlobDownload;
import syncular.jakarta.sync.BlobUpload;
import syncular.jakarta.sync.BlobUrls;
import syncular.jakarta.storage.postgres.PostgresLeaseStore;
import syncular.jakarta.storage.postgres.PostgresSegmentStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.sync.Leases;
import syncular.jakarta.sync.PresignedSegmentUrls;
import syncular.jakarta.sync.RequestOutcome;
import syncular.jakarta.sync.SegmentDownload;
import syncular.jakarta.sync.SegmentPublishing;
import syncular.jakarta.sync.SegmentUrls;
import syncular.jakarta.sync.SignedUrls;
import syncular.jakarta.sync.SqliteImageLane;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.sync.Validation;
import syncular.jakarta.web.Readiness.Check;

/**
 * The running server's parts, wired once the database is reachable and the schema installed: storage, the sync
 * handler, the host SPI. A deployer's own {@link Authenticator} or {@link ScopeResolver} CDI bean replaces the
 * built-in one configured by {@code syncular.auth.*}; in conformance-host mode the {@link HostOverride} replaces all.
 */
@ApplicationScoped
public class SyncRuntime {
    private static final System.Logger LOG = System.getLogger(SyncRuntime.class.getName());

    @Inject
    @Any
    Instance<Authenticator> authenticators;
    @Inject
    @Any
    Instance<ScopeResolver> resolvers;
    @Inject
    @Any
    Instance<HostOverride> overrides;
    @Inject
    @Any
    Instance<RowValidator> rowValidators;
    @Inject
    @Any
    Instance<CommitValidator> commitValidators;
    @Inject
    @Any
    Instance<BackfillDefinition> backfillDefinitions;
    @Inject
    Readiness readiness;
    @Inject
    Telemetry telemetry;
    @EJB
    PushGroups pushGroups;
    @EJB
    BackfillBatches backfillBatches;

    private volatile Parts parts;
    /** Removes the listener that feeds pushes' latencies to the backfill pacer (registered at the first start). */
    private Runnable unlistenPushes;
    private boolean resumed;

    /** Kept across restarts with the same settings, so a conformance reset does not open a client each time. */
    private S3BlobStore s3Blobs;
    /** The same, for the segment store. */
    private S3SegmentStore s3Segments;

    /** Everything a request needs, replaced as a whole. */
    public record Parts(SyncularConfig config, CompiledSchema schema, ServerStorage storage, SyncHandler handler,
                        Authenticator authenticator, ScopeResolver resolver, Clock clock, DataSource dataSource,
                        TransactionRunner runner, SegmentStore segments, SegmentDownload segmentDownload,
                        Declarations declarations, BackfillRunner backfill, Leases leases, BlobStore blobs,
                        BlobUpload blobUpload, BlobDownload blobDownload, AuditLog audit) { }

    /** The readiness check that is DOWN while the serve gate refuses this process (RFC 0007, issue 7). */
    static final String CHECK_SERVE_GATE = "serve-gate";

    /**
     * SPEC §5.9 blob bytes: in this database beside the rows that reference them (the default), or in an S3 bucket
     * ({@code syncular.blobs.store=s3}). An unreachable bucket does not fail deployment, as an unreachable database
     * does not: the first upload or download fails instead.
     */
    private BlobStore blobStore(SyncularConfig config, DataSource ds) {
        Optional<S3Settings> s3 = config.blobs().s3();
        if (s3.isEmpty()) {
            PostgresBlobStore blobs = new PostgresBlobStore(ds);
            blobs.install();
            return blobs;
        }
        if (s3Blobs == null || !s3Blobs.settings().equals(s3.get())) {
            if (s3Blobs != null) s3Blobs.close();
            s3Blobs = S3BlobStore.open(s3.get());
            LOG.log(Level.INFO, "Syncular blobs are stored in {0}", s3.get());
        }
        return s3Blobs;
    }

    /**
     * SPEC §5.1 segments: in this database (the default), or in an S3 bucket ({@code syncular.segments.store=s3});
     * like the blob bucket, an unreachable one fails the first bootstrap that publishes, not deployment.
     */
    private SegmentStore segmentStore(SyncularConfig config, DataSource ds) {
        Optional<S3Settings> s3 = config.segments().s3();
        if (s3.isEmpty()) {
            PostgresSegmentStore segments = new PostgresSegmentStore(ds, config.limits().segmentCacheBytes());
            segments.install();
            return segments;
        }
        if (s3Segments == null || !s3Segments.settings().equals(s3.get())) {
            if (s3Segments != null) s3Segments.close();
            s3Segments = S3SegmentStore.open(s3.get(), config.limits().segmentCacheBytes());
            LOG.log(Level.INFO, "Syncular segments are stored in {0}{1}", s3.get(), config.segments().presign()
                    ? "; bit-3 clients fetch them by presigned GET, TTL " + config.segments().presignTtlMs() + " ms"
                    : "");
        }
        return s3Segments;
    }

    /** This node's event bus: the ring, the live tails and the metrics read it. */
    public EventBus events() { return telemetry.events(); }

    /**
     * Authenticates a request or socket through the running authenticator; a refusal is an {@code auth.failed}
     * event (for the console's "what is failing") and the {@link SyncException} the caller answers with.
     */
    public Identity authenticate(Parts running, Credentials credentials, String transport) {
        try {
            return running.authenticator().authenticate(credentials)
                    .orElseThrow(() -> new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "authentication required"));
        } catch (SyncException e) {
            telemetry.events().emit(new ServerEvent.AuthFailed(running.clock().nowMs(), "", transport, e.code().wire()));
            throw e;
        }
    }

    @PreDestroy
    synchronized void close() {
        if (unlistenPushes != null) unlistenPushes.run();
        if (s3Blobs != null) s3Blobs.close();
        if (s3Segments != null) s3Segments.close();
    }

    /** Installs (or migrates) {@code schema} through a fresh storage instance and opens the endpoint on it. */
    public synchronized Parts start(SyncularConfig config, CompiledSchema requested, DataSource ds,
                                    TransactionRunner runner) {
        Optional<HostOverride> override = config.conformanceHost() && overrides.isResolvable()
                ? Optional.of(overrides.get()) : Optional.empty();
        // the conformance host's state survives a restart: the first start serves the schema it resumes with
        CompiledSchema schema = override.isPresent() && !resumed ? override.get().resume(requested, config, ds)
                : requested;
        resumed = true;
        Clock clock = override.map(HostOverride::clock).orElse(Clock.SYSTEM);
        PostgresServerStorage storage = new PostgresServerStorage(ds, runner, clock::nowMs,
                config.limits().lockTimeoutMs(), override.isPresent() ? 0 : config.limits().partitionTouchIntervalMs());
        storage.migrate();   // the base tables the declaration reads below need, before the first ensureSchema
        List<BackfillDefinition> definitions = new ArrayList<>(config.backfill().definitions());
        backfillDefinitions.forEach(definitions::add);
        Declarations declarations = new Declarations(definitions, schema.version(), storage);
        try {
            storage.ensureSchema(schema, declarations.current());
        } catch (StorageException e) {
            if (e.code() != StorageErrorCode.CHECKPOINT_INCOMPLETE && e.code() != StorageErrorCode.STORED_SCHEMA_NEWER) {
                throw e;
            }
            // RFC 0007: a peer's pending backfill this process did not declare, or a newer database. The endpoint
            // opens anyway so every request is refused through the gate with its details (503
            // sync.schema_not_ready), readiness says why, and the handler's ensureSchema retries per request.
            LOG.log(Level.WARNING, "Syncular schema version {0} must refuse for now: {1} {2}", schema.version(),
                    e.code().code(), e.details());
        }
        Authenticator auth = override.map(HostOverride::authenticator)
                .orElseGet(() -> authenticators.isResolvable() ? authenticators.get() : builtInAuthenticator(config, clock));
        ScopeResolver resolver = override.map(HostOverride::resolver)
                .orElseGet(() -> resolvers.isResolvable() ? resolvers.get() : builtInResolver(config, schema));
        SyncSettings settings = override.flatMap(HostOverride::settings).orElse(config.limits().settings());
        SegmentStore segments = segmentStore(config, ds);
        Leases leases = leases(override.map(HostOverride::leases).orElse(config.leases()), ds);
        ServerStorage served = override.map(o -> o.faults(storage)).orElse(storage);
        BlobStore blobs = blobStore(config, ds);
        PostgresAuditLog audit = new PostgresAuditLog(ds);
        audit.install();
        Optional<SignedUrls> signedUrls = override.isPresent() ? override.get().signedUrls() : signedUrls(config);
        // §5.4: presigned GETs from the segment bucket when configured, else native tokens (which this server still
        // verifies for URLs minted before a switch to presigning)
        Optional<SegmentUrls> segmentUrls = config.segments().presign() && segments instanceof SegmentPresigner p
                ? Optional.of(new PresignedSegmentUrls(p, config.segments().presignTtlMs()))
                : signedUrls.map(SegmentUrls.class::cast);
        Optional<SignedUrls> blobSigner = override.flatMap(HostOverride::blobSignedUrls)
                .or(() -> blobSignedUrls(config));
        BlobUrls blobUrls = blobUrls(config, blobSigner, blobs);
        SyncHandler handler = new SyncHandler(served, new ContainerUnits(pushGroups, backfillBatches, ds, served),
                () -> schema, declarations::current, resolver, clock, settings,
                new SegmentPublishing(segments, clock, settings.segmentTtlMs(), images(config, segments, clock,
                        settings, telemetry.events()), segmentUrls, telemetry.events()), validation(), leases, blobs,
                telemetry.events());
        Parts started = new Parts(config, schema, storage, handler, auth, resolver, clock, ds, runner, segments,
                new SegmentDownload(storage, segments, resolver, clock, schema, declarations::current, signedUrls),
                declarations,
                new BackfillRunner(storage, new ContainerUnits(pushGroups, backfillBatches, ds, storage),
                        () -> schema, declarations, clock, config.backfill().batchSize(),
                        config.backfill().maxPushWaitMs(), config.backfill().maxPushP95Ms(), telemetry.events()), leases,
                blobs,
                new BlobUpload(storage, blobs, clock, config.blobs().maxBytes(), blobUrls, blobSigner),
                new BlobDownload(storage, blobs, resolver, clock, schema, declarations::current, blobUrls,
                        blobSigner), audit);
        parts = started;
        if (unlistenPushes == null) {
            // one listener for the application's life, feeding whichever runner is in place (a reset replaces it)
            unlistenPushes = telemetry.events().listen(s -> {
                Parts now = parts;
                if (now != null && s.event() instanceof ServerEvent.RequestHandled r && r.pushCommits() > 0
                        && RequestOutcome.OK.outcome().equals(r.outcome())) {
                    now.backfill().pushServed(r.durationNanos());
                }
            });
        }
        refreshServeGate();
        return started;
    }

    /** SPEC §5.4: the signer of {@code syncular.signed-urls.*}, when a secret is configured. */
    private static Optional<SignedUrls> signedUrls(SyncularConfig config) {
        SyncularConfig.SignedUrlSettings s = config.signedUrls();
        if (!s.enabled()) return Optional.empty();
        LOG.log(Level.INFO, "signed segment URLs on: TTL " + s.ttlMs() + " ms under " + s.baseUrl());
        long ttl = s.ttlMs();
        return Optional.of(new SignedUrls(s.secret().orElseThrow(), s.baseUrl(), () -> ttl));
    }

    /** SPEC §5.9.3/§5.9.5: the native signer of {@code syncular.blobs.urls=signed}. */
    private static Optional<SignedUrls> blobSignedUrls(SyncularConfig config) {
        SyncularConfig.BlobSettings b = config.blobs();
        if (b.urls() != SyncularConfig.BlobUrlMode.SIGNED) return Optional.empty();
        LOG.log(Level.INFO, "signed blob URLs on: TTL " + b.urlTtlMs() + " ms under " + b.urlBase());
        long ttl = b.urlTtlMs();
        return Optional.of(new SignedUrls(config.signedUrls().secret().orElseThrow(), b.urlBase(), () -> ttl));
    }

    /** How downloads and grants answer: the native signer, the S3 store's presigner, or inline. */
    private static BlobUrls blobUrls(SyncularConfig config, Optional<SignedUrls> signer, BlobStore blobs) {
        if (signer.isPresent()) return signer.get();
        if (config.blobs().urls() != SyncularConfig.BlobUrlMode.PRESIGNED) return BlobUrls.NONE;
        // the configuration refused presigned without store=s3, and the S3 store presigns
        LOG.log(Level.INFO, "presigned blob URLs on: TTL " + config.blobs().urlTtlMs() + " ms, signed by the S3 store");
        return BlobUrls.presigned((BlobPresigner) blobs, config.blobs().urlTtlMs());
    }

    /** SPEC §5.3: the SQLite-image lane over the segment store, unless {@code syncular.images.enabled=false}. */
    private static Optional<SqliteImageLane> images(SyncularConfig config, SegmentStore segments, Clock clock,
                                                    SyncSettings settings, ServerEvents events) {
        SyncularConfig.ImageSettings images = config.images();
        if (!images.enabled()) return Optional.empty();
        return Optional.of(new SqliteImageLane(segments, clock, settings.segmentTtlMs(), images.directory(),
                images.concurrentBuilds(), events));
    }

    /** SPEC §7.3: the lease store in this database when a TTL is configured, else {@link Leases#OFF}. */
    private static Leases leases(SyncularConfig.LeaseSettings settings, DataSource ds) {
        if (!settings.enabled()) return Leases.OFF;
        PostgresLeaseStore store = new PostgresLeaseStore(ds, settings.signingKey().orElseThrow());
        store.install();
        LOG.log(Level.INFO, "auth leases on: TTL " + settings.ttlMs() + " ms");
        return new Leases(store, settings.ttlMs());
    }

    /**
     * §6.7/§6.8: every deployed {@link RowValidator} and {@link CommitValidator} bean (a deployer's jar, and the
     * conformance host's rule interpreter, which holds no rule unless its control plane installs one). Resolved
     * once here; the beans themselves decide per commit whether they apply.
     */
    private Validation validation() {
        List<RowValidator> rows = rowValidators.stream().toList();
        List<CommitValidator> commits = commitValidators.stream().toList();
        if (!rows.isEmpty() || !commits.isEmpty()) {
            LOG.log(Level.INFO, "validators: " + rows.size() + " row validator bean(s), " + commits.size()
                    + " commit validator bean(s)");
        }
        return rows.isEmpty() && commits.isEmpty() ? Validation.NONE : new Validation(() -> rows, () -> commits);
    }

    /**
     * Evaluates the serve gate for this process (no partition: the pending set spans all of them) and sets the
     * {@value #CHECK_SERVE_GATE} readiness check: DOWN while this process must refuse. Called at start and by the
     * backfill timer's every tick. Returns whether this process may serve.
     */
    public boolean refreshServeGate() {
        Parts p = parts;
        if (p == null) return false;
        Optional<String> refusal = p.declarations().refusal();
        if (refusal.isEmpty()) {
            readiness.up(CHECK_SERVE_GATE, "serving", "serving schema version " + p.schema().version());
            return true;
        }
        String why = refusal.get();
        Check previous = readiness.checks().stream().filter(c -> c.name().equals(CHECK_SERVE_GATE)).findFirst()
                .orElse(null);
        if (previous == null || previous.up()) {
            LOG.log(Level.WARNING, "Syncular refuses sync requests (503 sync.schema_not_ready): {0}", why);
        }
        readiness.down(CHECK_SERVE_GATE, "refusing: schema migration in progress", "refusing: " + why);
        return false;
    }

    /** The parts, or empty while the server is not ready (database unreachable, schema not installed). */
    public Optional<Parts> parts() { return Optional.ofNullable(parts); }

    static Authenticator builtInAuthenticator(SyncularConfig config, Clock clock) {
        SyncularConfig.Auth auth = config.auth();
        if (auth.jwt().isPresent()) return new JwtAuthenticator(auth.jwt().get(), clock);
        if (auth.mode().isEmpty()) {
            LOG.log(Level.WARNING, "syncular.auth.mode is not set and no Authenticator bean is deployed: "
                    + "every sync request is answered 401 sync.auth_required");
            return credentials -> Optional.empty();
        }
        LOG.log(Level.WARNING, "syncular.auth.mode=fixed: every request acts as one actor in one partition. "
                + "For development and benchmarks only.");
        Identity fixed = new Identity(auth.fixedActor(), auth.fixedPartition());
        return credentials -> Optional.of(fixed);
    }

    /**
     * The scope resolver when no {@link ScopeResolver} bean is deployed. {@code syncular.auth.fixed.allowed-scopes}
     * is fixed mode's grant and nobody else's: outside fixed mode (jwt, or a deployer's own Authenticator bean) the
     * grant is what the identity carries (a JWT's scopes claim), and an identity carrying none is granted nothing.
     */
    static ScopeResolver builtInResolver(SyncularConfig config, CompiledSchema schema) {
        if (!config.auth().mode().filter("fixed"::equals).isPresent()) {
            if (!config.auth().allowedScopes().isEmpty()) {
                LOG.log(Level.WARNING, "syncular.auth.fixed.allowed-scopes is ignored: it applies only with "
                        + "syncular.auth.mode=fixed; scopes come from the authenticated identity");
            }
            return identity -> identity.grantedScopes() == null ? Map.of() : identity.grantedScopes();
        }
        Map<String, List<String>> allowed = config.auth().allowedScopes();
        Map<String, List<String>> resolved = allowed.containsKey("*")
                ? schema.variables().stream().collect(Collectors.toMap(v -> v, v -> List.of("*")))
                : Map.copyOf(allowed);
        return identity -> resolved;
    }
}

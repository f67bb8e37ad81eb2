package syncular.jakarta.testhost;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.math.BigDecimal;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.ConfigProvider;
import syncular.jakarta.host.Authenticator;
import syncular.jakarta.host.AuthorityUnavailable;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.postgres.PostgresConformanceSupport;
import syncular.jakarta.sync.SignedUrls;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.web.HostOverride;
import syncular.jakarta.web.RealtimeService;
import syncular.jakarta.web.SyncularConfig;
import syncular.jakarta.wire.Json;

/**
 * The host state a conformance suite controls (upstream {@code ServerDriver}): the partition of the last reset, each
 * actor's allowed scopes, resolver faults, the virtual clock, the reset's schema and limits, the installed validator
 * rules and the lease key. Authentication is the {@code X-Syncular-Actor} header (HTTP) or the {@code actor} query
 * parameter (WebSocket). A resolver outage is the §7.3.3 signal ({@link AuthorityUnavailable}), a failing resolver a
 * plain throw.
 *
 * <p>Durable (issue 19): every change is written to the database the server serves from, and a process started on
 * that database resumes it ({@link #resume}), so an external test can {@code kill -9} the server, start it again and
 * carry on with the same partition, grants, clock and schema. Thread-safe.
 */
@ApplicationScoped
public class ConformanceHost implements HostOverride {
    public static final String ACTOR_HEADER = "X-Syncular-Actor";
    private static final System.Logger LOG = System.getLogger(ConformanceHost.class.getName());

    @Inject
    ConformanceValidators validators;
    @Inject
    RealtimeService realtime;

    private final AtomicLong nowMs = new AtomicLong(System.currentTimeMillis());
    private final Map<String, Map<String, List<String>>> allowed = new ConcurrentHashMap<>();
    private volatile String partition = "default";
    private volatile boolean failing;
    private volatile boolean outage;
    private volatile SyncSettings settings;
    private volatile SyncularConfig.LeaseSettings leases = SyncularConfig.LeaseSettings.OFF;
    /** §5.4 signed URLs: the base the last reset gave (null = off) and the TTL, changeable between rounds. */
    private volatile String signedUrlBase;
    private volatile long signedUrlTtlMs;
    /** §5.9.3/§5.9.5 blob presign (capability blob-presign): the base blob URLs are minted under, null = off. */
    private volatile String blobUrlBase;
    private final IdempotencyFault idempotencyFault = new IdempotencyFault();
    /** Signs lease records: the configured key, else one drawn once and kept in the durable state. */
    private volatile byte[] leaseKey = ConfigProvider.getConfig().getOptionalValue("syncular.leases.signing-key",
            String.class).map(k -> Base64.getDecoder().decode(k.trim())).orElseGet(() -> {
                byte[] k = new byte[32];
                new SecureRandom().nextBytes(k);
                return k;
            });
    /** What the durable state keeps as the requests gave it: re-parsed on resume. */
    private volatile Map<String, Object> resetRequest;
    private volatile Object validatorsRequest;
    private volatile Object commitValidatorRequest;
    private volatile DataSource database;
    private volatile Boolean enabled;

    /** {@code syncular.conformance-host}, read once. */
    public boolean enabled() {
        Boolean e = enabled;
        if (e == null) {
            e = ConfigProvider.getConfig().getOptionalValue("syncular.conformance-host", String.class)
                    .map(String::trim).map("true"::equalsIgnoreCase).orElse(false);
            enabled = e;
        }
        return e;
    }

    /**
     * Restores every host-control default, then applies the reset's partition, time, limits and lease TTL; the
     * validators are cleared. Persisted.
     */
    synchronized void reset(ConformanceResource.ResetSpec spec) {
        apply(spec);
        allowed.clear();
        failing = false;
        outage = false;
        validatorsRequest = null;
        commitValidatorRequest = null;
        validators.clear();
        persist();
    }

    private void apply(ConformanceResource.ResetSpec spec) {
        idempotencyFault.disarm();
        resetRequest = spec.raw();
        partition = spec.partition();
        nowMs.set(spec.nowMs());
        settings = spec.limits();
        leases = spec.leaseTtlMs() > 0 ? new SyncularConfig.LeaseSettings(spec.leaseTtlMs(), Optional.of(leaseKey))
                : SyncularConfig.LeaseSettings.OFF;
        signedUrlBase = spec.signedUrlBase();
        signedUrlTtlMs = spec.signedUrlTtlMs();
        blobUrlBase = null;   // the reference host starts with presign off; a scenario turns it on
    }

    /** {@code setBlobPresign}: blob URLs under {@code base} from now on, or none ({@code null}). Persisted. */
    synchronized void blobPresign(String base) {
        blobUrlBase = base;
        persist();
    }

    synchronized void signedUrlTtl(long ttlMs) {
        signedUrlTtlMs = ttlMs;
        persist();
    }

    String partition() { return partition; }

    synchronized void allow(String actorId, Map<String, List<String>> scopes) {
        allowed.put(actorId, Map.copyOf(scopes));
        persist();
    }

    synchronized void resolverFlags(Boolean newFailing, Boolean newOutage) {
        if (newFailing != null) failing = newFailing;
        if (newOutage != null) outage = newOutage;
        persist();
    }

    /** §6.7 rules, from a request already checked into {@code rules}. */
    synchronized void installValidators(Object request, Map<String, ConformanceValidators.Rule> rules) {
        validators.install(rules);
        validatorsRequest = request;
        persist();
    }

    /** The §6.8 rule (null = none), from a request's checked {@code spec}. */
    synchronized void installCommitValidator(Object spec, ConformanceValidators.RequireSiblingWhen rule) {
        validators.installCommit(rule);
        commitValidatorRequest = spec;
        persist();
    }

    /** The next push's idempotency lookup finds its stored result unreadable (§6.3); one-shot, not persisted. */
    void failNextIdempotencyLookup() { idempotencyFault.arm(); }

    synchronized long advance(long ms) {
        long now = nowMs.addAndGet(ms);
        persist();
        return now;
    }

    long now() { return nowMs.get(); }

    /** Writes the whole state in one statement; a process killed at any point leaves the last complete one. */
    private void persist() {
        DataSource ds = database;
        if (ds == null) return;   // not started yet: resume writes nothing before it has read
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("reset", resetRequest);
        state.put("nowMs", nowMs.get());
        state.put("allowed", new LinkedHashMap<>(allowed));
        state.put("failing", failing);
        state.put("outage", outage);
        state.put("validators", validatorsRequest);
        state.put("commitValidator", commitValidatorRequest);
        state.put("leaseKey", Base64.getEncoder().encodeToString(leaseKey));
        state.put("signedUrlTtlMs", signedUrlTtlMs);
        state.put("blobUrlBase", blobUrlBase);
        new PostgresConformanceSupport(ds).saveHostState(Json.write(state));
    }

    @Override
    public synchronized CompiledSchema resume(CompiledSchema configured, SyncularConfig config, DataSource ds) {
        database = ds;
        Optional<String> saved = new PostgresConformanceSupport(ds).loadHostState();
        if (saved.isEmpty()) return configured;
        Map<?, ?> state = (Map<?, ?>) Json.parse(saved.get());
        leaseKey = Base64.getDecoder().decode((String) state.get("leaseKey"));
        if (!(state.get("reset") instanceof Map<?, ?> reset)) return configured;   // no reset since it was created
        @SuppressWarnings("unchecked")
        ConformanceResource.ResetSpec spec = ConformanceResource.ResetSpec.parse((Map<String, Object>) reset,
                config.limits().settings());
        apply(spec);
        nowMs.set(((BigDecimal) state.get("nowMs")).longValueExact());
        if (state.get("signedUrlTtlMs") instanceof BigDecimal ttl) signedUrlTtlMs = ttl.longValueExact();
        blobUrlBase = state.get("blobUrlBase") instanceof String base ? base : null;
        allowed.clear();
        ((Map<?, ?>) state.get("allowed")).forEach((actor, scopes) -> {
            Map<String, List<String>> grant = new LinkedHashMap<>();
            ((Map<?, ?>) scopes).forEach((k, v) -> grant.put((String) k,
                    ((List<?>) v).stream().map(String.class::cast).toList()));
            allowed.put((String) actor, Map.copyOf(grant));
        });
        failing = Boolean.TRUE.equals(state.get("failing"));
        outage = Boolean.TRUE.equals(state.get("outage"));
        validatorsRequest = state.get("validators");
        commitValidatorRequest = state.get("commitValidator");
        validators.clear();
        if (validatorsRequest != null) {
            validators.install(ConformanceResource.validatorRules(validatorsRequest, spec.schema()));
        }
        validators.installCommit(ConformanceResource.commitRule(commitValidatorRequest, spec.schema()));
        realtime.reset(spec.maxDeltaBytes(), spec.maxPresenceBytes());
        LOG.log(Level.INFO, "conformance host resumed: partition {0}, schema version {1}, {2} actor grant(s)",
                partition, spec.schema().version(), allowed.size());
        return spec.schema();
    }

    @Override
    public Authenticator authenticator() {
        return credentials -> credentials.header(ACTOR_HEADER).or(() -> credentials.queryParameter("actor"))
                .map(String::trim).filter(a -> !a.isEmpty()).map(actor -> new Identity(actor, partition));
    }

    @Override
    public ScopeResolver resolver() {
        return identity -> {
            if (failing) throw new IllegalStateException("conformance host: resolver set to fail");
            if (outage) throw new AuthorityUnavailable("conformance host: resolver set to an outage");
            return allowed.getOrDefault(identity.actorId(), Map.of());
        };
    }

    @Override
    public Clock clock() { return nowMs::get; }

    @Override
    public Optional<SyncSettings> settings() { return Optional.ofNullable(settings); }

    @Override
    public SyncularConfig.LeaseSettings leases() { return leases; }

    /** Signs under a key derived from the durable lease key, so URLs survive a restart and no key is reused as is. */
    @Override
    public Optional<SignedUrls> signedUrls() {
        String base = signedUrlBase;
        return base == null ? Optional.empty() : Optional.of(new SignedUrls(urlKey(), base, () -> signedUrlTtlMs));
    }

    /**
     * The host serves the blob URLs it mints itself (the native scheme, on the virtual clock), whatever the store: the
     * catalog's clock is not the real one, and an S3 server honours only SigV4 URLs signed on the real one. The TTL
     * is the reference host's, 900 s. Same key as the segment URLs: the claim sets never verify as each other.
     */
    @Override
    public Optional<SignedUrls> blobSignedUrls() {
        String base = blobUrlBase;
        return base == null ? Optional.empty()
                : Optional.of(new SignedUrls(urlKey(), base, () -> SignedUrls.DEFAULT_TTL_MS));
    }

    private byte[] urlKey() {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(leaseKey, "HmacSHA256"));
            return mac.doFinal("syncular.conformance.signed-urls".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
        }
    }

    @Override
    public ServerStorage faults(ServerStorage storage) { return idempotencyFault.around(storage); }
}

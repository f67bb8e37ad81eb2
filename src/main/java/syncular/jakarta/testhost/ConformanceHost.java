package syncular.jakarta.testhost;

import jakarta.enterprise.context.ApplicationScoped;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.config.ConfigProvider;
import syncular.jakarta.host.Authenticator;
import syncular.jakarta.host.AuthorityUnavailable;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.web.HostOverride;
import syncular.jakarta.web.SyncularConfig;

/**
 * The host state a conformance suite controls (upstream {@code ServerDriver}): the partition of the last reset, each
 * actor's allowed scopes, resolver faults, the virtual clock and the reset's limits. Authentication is the
 * {@code X-Syncular-Actor} header (HTTP) or the {@code actor} query parameter (WebSocket). A resolver outage is the
 * §7.3.3 signal ({@link AuthorityUnavailable}), a failing resolver a plain throw. Thread-safe.
 */
@ApplicationScoped
public class ConformanceHost implements HostOverride {
    public static final String ACTOR_HEADER = "X-Syncular-Actor";

    private final AtomicLong nowMs = new AtomicLong(System.currentTimeMillis());
    private final Map<String, Map<String, List<String>>> allowed = new ConcurrentHashMap<>();
    private volatile String partition = "default";
    private volatile boolean failing;
    private volatile boolean outage;
    private volatile SyncSettings settings;
    private volatile SyncularConfig.LeaseSettings leases = SyncularConfig.LeaseSettings.OFF;
    private final IdempotencyFault idempotencyFault = new IdempotencyFault();
    /** Signs this process's lease records: the configured key, or one drawn at start-up. */
    private final byte[] leaseKey = ConfigProvider.getConfig().getOptionalValue("syncular.leases.signing-key",
            String.class).map(k -> Base64.getDecoder().decode(k.trim())).orElseGet(() -> {
                byte[] k = new byte[32];
                new SecureRandom().nextBytes(k);
                return k;
            });
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
     * Restores every host-control default, then applies the reset's partition, time, limits and lease TTL (0: leases
     * off).
     */
    void reset(String newPartition, long startMs, SyncSettings limits, long leaseTtlMs) {
        allowed.clear();
        failing = false;
        outage = false;
        idempotencyFault.disarm();
        partition = newPartition;
        nowMs.set(startMs);
        settings = limits;
        leases = leaseTtlMs > 0 ? new SyncularConfig.LeaseSettings(leaseTtlMs, Optional.of(leaseKey))
                : SyncularConfig.LeaseSettings.OFF;
    }

    String partition() { return partition; }

    void allow(String actorId, Map<String, List<String>> scopes) { allowed.put(actorId, Map.copyOf(scopes)); }

    void resolverFlags(Boolean newFailing, Boolean newOutage) {
        if (newFailing != null) failing = newFailing;
        if (newOutage != null) outage = newOutage;
    }

    /** The next push's idempotency lookup finds its stored result unreadable (§6.3). */
    void failNextIdempotencyLookup() { idempotencyFault.arm(); }

    long advance(long ms) { return nowMs.addAndGet(ms); }

    long now() { return nowMs.get(); }

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

    @Override
    public ServerStorage faults(ServerStorage storage) { return idempotencyFault.around(storage); }
}

package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.LeaseStore;
import syncular.jakarta.storage.StoredLease;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Lease;

/**
 * Auth leases (SPEC §7.3): with a TTL configured, every round whose scopes the live resolver resolved issues or
 * slides the client's lease and answers it in a LEASE frame; a round whose resolver signals an outage
 * ({@link syncular.jakarta.host.AuthorityUnavailable}) is authorized against the stored lease instead, without
 * refreshing it. Off ({@link #OFF}, the default): no frame, and an outage is {@code sync.auth_lease_required}.
 */
public final class Leases {
    public static final Leases OFF = new Leases(null, 0);

    private final LeaseStore store;
    private final long ttlMs;

    /** {@code ttlMs}: the sliding window (§7.3.3); positive. */
    public Leases(LeaseStore store, long ttlMs) {
        if (store != null && ttlMs <= 0) throw new IllegalArgumentException("a lease TTL is positive");
        this.store = store;
        this.ttlMs = ttlMs;
    }

    /** §7.3.3 issuance and sliding refresh after a live resolution; empty when leases are off. */
    Optional<Lease> issue(Identity identity, String clientId, Map<String, List<String>> allowed, long nowMs) {
        if (store == null) return Optional.empty();
        StoredLease l = store.issue(identity.partition(), clientId, identity.actorId(), allowed, nowMs, ttlMs);
        return Optional.of(new Lease(l.leaseId(), l.expiresAtMs()));
    }

    /**
     * §7.3.3 during an outage: the stored lease's allowed scopes, when it is the actor's, unrevoked and unexpired;
     * otherwise the request-level {@code sync.auth_lease_required} or {@code sync.auth_lease_revoked}.
     */
    Map<String, List<String>> authorize(Identity identity, String clientId, long nowMs) {
        if (store == null) {
            throw new SyncException(ErrorCode.SYNC_AUTH_LEASE_REQUIRED,
                    "live authorization is unavailable and auth leases are not configured (§7.3.3)");
        }
        Optional<StoredLease> stored = store.get(identity.partition(), clientId);
        if (stored.isEmpty() || !stored.get().actorId().equals(identity.actorId())) {
            throw new SyncException(ErrorCode.SYNC_AUTH_LEASE_REQUIRED,
                    "no valid auth lease for this client during an authorization outage (§7.3.3)");
        }
        StoredLease lease = stored.get();
        if (lease.revoked()) {
            throw new SyncException(ErrorCode.SYNC_AUTH_LEASE_REVOKED,
                    "auth lease " + lease.leaseId() + " was revoked (§7.3.4)");
        }
        if (nowMs >= lease.expiresAtMs()) {
            throw new SyncException(ErrorCode.SYNC_AUTH_LEASE_REQUIRED,
                    "auth lease " + lease.leaseId() + " is expired (§7.3.3)");
        }
        return lease.allowedScopes();
    }

    /** §7.3.4: the host's revocation by leaseId; {@code sync.not_found} when the partition holds no such lease. */
    public void revoke(String partition, String leaseId) {
        if (store == null) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "auth leases are not configured on this server");
        }
        if (!store.revoke(partition, leaseId)) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "no auth lease " + leaseId + " in this partition");
        }
    }
}

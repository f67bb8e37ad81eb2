package syncular.jakarta.storage;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where auth leases live (SPEC §7.3.1), one per (partition, clientId). Records are signed at rest by the store and
 * verified on read: a record that fails its check is reported absent, never trusted.
 */
public interface LeaseStore {
    /** The lease of (partition, clientId), revoked or not; empty when there is none or it failed verification. */
    Optional<StoredLease> get(String partition, String clientId);

    /**
     * Issues or refreshes the lease of (partition, clientId) (§7.3.3): a refresh slides the same leaseId; a new id is
     * minted only when there was none, the stored one is revoked (§7.3.4: a revoked handle never resurrects), or it
     * belongs to another actor. Returns the stored record.
     */
    StoredLease issue(String partition, String clientId, String actorId, Map<String, List<String>> allowedScopes,
                      long nowMs, long ttlMs);

    /** Revokes the lease with this id in the partition (durable); false when the partition holds no such lease. */
    boolean revoke(String partition, String leaseId);
}

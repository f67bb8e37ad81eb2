package syncular.jakarta.storage;

import java.util.List;
import java.util.Map;

/**
 * An auth lease as stored (SPEC §7.3.1), keyed by (partition, clientId): the actor's resolved allowed scopes at
 * issuance, valid while {@code now < expiresAtMs} and not revoked.
 */
public record StoredLease(String leaseId, String actorId, Map<String, List<String>> allowedScopes, long issuedAtMs,
                          long expiresAtMs, boolean revoked) {
    public StoredLease {
        allowedScopes = Map.copyOf(allowedScopes);
    }
}

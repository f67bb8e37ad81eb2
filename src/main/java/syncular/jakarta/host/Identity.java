package syncular.jakarta.host;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Who is asking, as host authentication decided (SPEC §1.1): the actor and the partition it acts in, and — when the
 * credential itself carries them, as a JWT scopes claim does — the scopes it grants (null otherwise).
 *
 * <p>{@code expiresAtMs}: the instant (epoch ms, {@link Clock} time) from which the credential no longer
 * authenticates, or null for a credential without one. An HTTP request re-authenticates every time; a WebSocket
 * authenticates once at upgrade, so the realtime channel uses this to close the socket when its credential lapses
 * rather than letting it act on a token that would be refused anywhere else.
 */
public record Identity(String actorId, String partition, Map<String, List<String>> grantedScopes, Long expiresAtMs) {
    public Identity {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(partition, "partition");
        if (actorId.isEmpty() || partition.isEmpty()) throw new IllegalArgumentException("empty actor or partition");
        if (grantedScopes != null) grantedScopes = Map.copyOf(grantedScopes);
    }

    public Identity(String actorId, String partition, Map<String, List<String>> grantedScopes) {
        this(actorId, partition, grantedScopes, null);
    }

    public Identity(String actorId, String partition) { this(actorId, partition, null, null); }

    /** Whether the credential has lapsed at {@code nowMs} (never, without an expiry). */
    public boolean expiredAt(long nowMs) { return expiresAtMs != null && nowMs >= expiresAtMs; }
}

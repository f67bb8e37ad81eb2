package syncular.jakarta.host;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Who is asking, as host authentication decided (SPEC §1.1): the actor and the partition it acts in, and — when the
 * credential itself carries them, as a JWT scopes claim does — the scopes it grants (null otherwise).
 */
public record Identity(String actorId, String partition, Map<String, List<String>> grantedScopes) {
    public Identity {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(partition, "partition");
        if (actorId.isEmpty() || partition.isEmpty()) throw new IllegalArgumentException("empty actor or partition");
        if (grantedScopes != null) grantedScopes = Map.copyOf(grantedScopes);
    }

    public Identity(String actorId, String partition) { this(actorId, partition, null); }
}

package syncular.jakarta.host;

import java.util.Objects;

/** Who is asking, as host authentication decided (SPEC §1.1): the actor and the partition it acts in. */
public record Identity(String actorId, String partition) {
    public Identity {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(partition, "partition");
        if (actorId.isEmpty() || partition.isEmpty()) throw new IllegalArgumentException("empty actor or partition");
    }
}

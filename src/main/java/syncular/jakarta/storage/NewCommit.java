package syncular.jakarta.storage;

import java.util.List;
import java.util.Objects;

/** A commit to append (SPEC §2.1): its identity, author, time and changes in operation order. */
public record NewCommit(String clientId, String clientCommitId, String actorId, long createdAtMs,
                        List<StoredChange> changes) {
    public NewCommit {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(clientCommitId, "clientCommitId");
        Objects.requireNonNull(actorId, "actorId");
        changes = List.copyOf(changes);
    }
}

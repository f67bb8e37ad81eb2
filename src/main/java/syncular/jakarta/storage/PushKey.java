package syncular.jakarta.storage;

import java.util.Objects;

/** A push commit's idempotency key within a partition (SPEC §2.3). */
public record PushKey(String clientId, String clientCommitId) {
    public PushKey {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(clientCommitId, "clientCommitId");
    }
}

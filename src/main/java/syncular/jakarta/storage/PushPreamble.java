package syncular.jakarta.storage;

import java.util.Optional;

/**
 * What a push needs to know right after taking the partition lock (ARCHITECTURE request step 4): the serve-gate
 * token on the push's own connection and the idempotency re-check, read under the lock.
 */
public record PushPreamble(ServeGate gate, Optional<StoredPushResult> existing) { }

package syncular.jakarta.storage;

import java.util.Map;
import java.util.Optional;

/**
 * What a push needs to know right after taking the partition lock (ARCHITECTURE request step 4): the serve-gate
 * token on the push's own connection, the idempotency re-check, and the current state of the rows it asked for
 * (absent from {@code rows} = the row does not exist), all read under the lock.
 */
public record PushPreamble(ServeGate gate, Optional<StoredPushResult> existing, Map<RowKey, StoredRow> rows) {
    public PushPreamble {
        rows = Map.copyOf(rows);
    }
}

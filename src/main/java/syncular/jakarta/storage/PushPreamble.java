package syncular.jakarta.storage;

import java.util.Map;
import java.util.Set;

/**
 * What a push group needs to know right after taking the partition lock (ARCHITECTURE request step 4): the serve-gate
 * token on the push's own connection, the idempotency re-check of every commit of the group ({@code unreadable}: a
 * stored result that cannot be read), the current state of the rows it asked for (absent from {@code rows} = the
 * row does not exist), which of them have a tombstone (a delete not yet pruned, WIRE3-DELTA §4; empty when not
 * asked for), and the
 * partition's commit-log head and horizon, all read under the lock.
 */
public record PushPreamble(ServeGate gate, Map<PushKey, StoredPushResult> existing, Set<PushKey> unreadable,
                           Map<RowKey, StoredRow> rows, Set<RowKey> tombstones, long maxCommitSeq, long horizonSeq) {
    public PushPreamble {
        existing = Map.copyOf(existing);
        unreadable = Set.copyOf(unreadable);
        rows = Map.copyOf(rows);
        tombstones = Set.copyOf(tombstones);
    }
}

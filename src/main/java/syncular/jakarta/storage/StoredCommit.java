package syncular.jakarta.storage;

import java.util.List;

/** A commit read back from the log: only the changes that matched the read's table and scopes. */
public record StoredCommit(long commitSeq, long createdAtMs, String actorId, List<StoredChange> changes) {
    public StoredCommit {
        changes = List.copyOf(changes);
    }
}

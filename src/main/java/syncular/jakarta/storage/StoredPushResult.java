package syncular.jakarta.storage;

import java.util.List;
import java.util.Objects;

/**
 * A persisted push outcome (SPEC §2.3, §6.3): {@code commitSeq} present iff applied; {@code recordedAtMs} and
 * {@code cacheIdentity} are optional (null when absent). First writer wins: a second put for the same key is a no-op.
 */
public record StoredPushResult(Status status, Long commitSeq, Long recordedAtMs, String cacheIdentity,
                               List<OperationResult> results) {
    public enum Status { APPLIED, REJECTED }

    public StoredPushResult {
        Objects.requireNonNull(status, "status");
        results = List.copyOf(results);
        if ((status == Status.APPLIED) != (commitSeq != null)) {
            throw new IllegalArgumentException("commitSeq is present iff the result is applied");
        }
    }

    public static StoredPushResult applied(long commitSeq, List<OperationResult> results) {
        return new StoredPushResult(Status.APPLIED, commitSeq, null, null, results);
    }

    public static StoredPushResult rejected(List<OperationResult> results) {
        return new StoredPushResult(Status.REJECTED, null, null, null, results);
    }
}

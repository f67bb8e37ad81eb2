package syncular.jakarta.host;

import java.util.List;
import java.util.Objects;

/**
 * A whole-commit validator (SPEC §6.8): an aggregate invariant over a commit's operations. Deploy it as a CDI bean;
 * every bean of this type runs, in bean order. It runs once per new commit, after every operation has passed its
 * §6.1–§6.7 path and been staged, and before the append; never on a replay and never when an operation already
 * terminated the commit. Its context reads the final candidate state, sibling writes included.
 *
 * <p>Reject by throwing {@link ValidationRejection#ofOperation} naming the blamed operation; any other throw rejects
 * with {@code sync.constraint_violation} at operation 0.
 */
public interface CommitValidator {
    /** Whether this validator is currently active; an inactive one costs the push nothing (§6.8 "off by default"). */
    default boolean active() { return true; }

    void validate(Commit commit, ValidationContext context);

    /** §6.8 operation evidence: the commit's ids and its operations in pushed order. */
    record Commit(String clientId, String clientCommitId, String actorId, String partition,
                  List<ValidatedOperation> operations) {
        public Commit {
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(clientCommitId, "clientCommitId");
            operations = List.copyOf(operations);
        }
    }
}

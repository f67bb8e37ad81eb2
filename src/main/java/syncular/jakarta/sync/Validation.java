package syncular.jakarta.sync;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.RowValidator;
import syncular.jakarta.host.ValidatedOperation;
import syncular.jakarta.host.ValidationRejection;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.RejectionDetails;

/**
 * The host's validators (SPEC §6.7 per table, §6.8 whole commit) and how their verdicts become stored operation
 * outcomes. Off by default: with no validator handling a table and no active commit validator the push decodes
 * nothing extra and makes no extra read (§6.7 "adds no per-operation cost when off").
 *
 * <p>A deliberate {@link ValidationRejection} becomes an {@code error} record with the host code, not retryable,
 * and its details as PUSH_RESULT_DETAILS, stored with the outcome so a replay repeats it (§6.3.1). Anything else a
 * validator throws, and any failed read, becomes {@code sync.constraint_violation} (§6.7) — the thrown message stays
 * in the server log, never on the wire — except a read that failed for a transient database reason (serialization
 * failure, deadlock, lock timeout, lost connection: {@link StorageErrorCode#retryable()}). That is no verdict on the
 * commit, so it is rethrown: the push transaction rolls back, nothing is stored, and the client's retry of the same
 * commit is validated afresh.
 */
public final class Validation {
    private static final System.Logger LOG = System.getLogger(Validation.class.getName());

    /** No validators at all. */
    public static final Validation NONE = new Validation(List::of, List::of);

    private final Supplier<List<RowValidator>> rowValidators;
    private final Supplier<List<CommitValidator>> commitValidators;

    /** Suppliers, read once per commit, so a validator set that changes at run time applies to the next commit. */
    public Validation(Supplier<List<RowValidator>> rowValidators, Supplier<List<CommitValidator>> commitValidators) {
        this.rowValidators = rowValidators;
        this.commitValidators = commitValidators;
    }

    /** The validators one commit runs with, or null when none is active (the zero-cost path). */
    Run begin() {
        List<RowValidator> rows = rowValidators.get();
        List<CommitValidator> commits = commitValidators.get().stream().filter(CommitValidator::active).toList();
        return rows.isEmpty() && commits.isEmpty() ? null : new Run(rows, commits);
    }

    /** One commit's validators. */
    static final class Run {
        private final List<RowValidator> rows;
        private final List<CommitValidator> commits;

        private Run(List<RowValidator> rows, List<CommitValidator> commits) {
            this.rows = rows;
            this.commits = commits;
        }

        /** Whether an operation on {@code table} needs its rows decoded (a row validator or the commit evidence). */
        boolean wants(String table) {
            return !commits.isEmpty() || rows.stream().anyMatch(v -> v.handles(table));
        }

        boolean collectsEvidence() { return !commits.isEmpty(); }

        /** §6.7: every row validator for the operation's table, in order; the first rejection terminates. */
        Optional<OperationResult.Failed> validateRow(ValidatedOperation op, ValidationReads reads) {
            for (RowValidator v : rows) {
                if (!v.handles(op.table())) continue;
                Optional<OperationResult.Failed> verdict = verdict(op.opIndex(), reads, () -> v.validate(op, reads),
                        null);
                if (verdict.isPresent()) return verdict;
            }
            return Optional.empty();
        }

        /** §6.8: every active commit validator, once, over the staged candidate state. */
        Optional<OperationResult.Failed> validateCommit(CommitValidator.Commit commit, ValidationReads reads) {
            int count = commit.operations().size();
            for (CommitValidator v : commits) {
                Optional<OperationResult.Failed> verdict = verdict(0, reads, () -> v.validate(commit, reads), count);
                if (verdict.isPresent()) return verdict;
            }
            return Optional.empty();
        }
    }

    /**
     * Runs one callback and classifies its end. {@code operationCount} non-null: a commit validator, whose rejection
     * names its own operation (which must exist in the commit, else it is a host bug).
     */
    static Optional<OperationResult.Failed> verdict(int opIndex, ValidationReads reads, Runnable callback,
                                                    Integer operationCount) {
        try {
            callback.run();
        } catch (ValidationRejection r) {
            rethrowTransientReadFailure(reads);
            // a row validator rejects the operation it validates; only a commit validator names one
            int blamed = operationCount == null ? opIndex : r.opIndex().orElse(opIndex);
            if (operationCount != null && (r.opIndex().isEmpty() || blamed >= operationCount)) {
                LOG.log(Level.WARNING, "a commit validator rejected without naming an operation of the commit "
                        + "(opIndex " + r.opIndex().map(String::valueOf).orElse("absent") + " of " + operationCount
                        + "); answering sync.constraint_violation");
                return Optional.of(constraintViolation(0));
            }
            if (reads.failure().isPresent()) return Optional.of(constraintViolation(blamed));
            return Optional.of(new OperationResult.Failed(blamed, r.code(), r.getMessage(), false,
                    r.details().map(RejectionDetails::toJson).orElse(null)));
        } catch (RuntimeException e) {
            rethrowTransientReadFailure(reads);
            LOG.log(Level.WARNING, "a validator failed unexpectedly; answering sync.constraint_violation", e);
            return Optional.of(constraintViolation(opIndex));
        }
        rethrowTransientReadFailure(reads);
        if (reads.failure().isPresent()) {
            LOG.log(Level.WARNING, "a validator accepted after one of its reads failed; answering "
                    + "sync.constraint_violation", reads.failure().get());
            return Optional.of(constraintViolation(opIndex));
        }
        return Optional.empty();
    }

    /** Whatever the validator did with it, a transient read failure ends the push as an infrastructure failure. */
    private static void rethrowTransientReadFailure(ValidationReads reads) {
        if (reads.failure().isPresent() && reads.failure().get() instanceof StorageException e
                && e.code().retryable()) {
            throw e;
        }
    }

    private static OperationResult.Failed constraintViolation(int opIndex) {
        return new OperationResult.Failed(opIndex, ErrorCode.SYNC_CONSTRAINT_VIOLATION.wire(),
                "the write was refused by a server-side validation rule", false, null);
    }
}

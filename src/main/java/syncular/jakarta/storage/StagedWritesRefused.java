package syncular.jakarta.storage;

/**
 * The database refused a write of a unit that was staged ({@link ServerStorage#runUnit}): it surfaced in a later round
 * trip, where it cannot be told which operation it was. Whoever owns the unit's transaction rolls it back and runs the
 * unit once more unstaged ({@link #stagedThenUnstaged}), where each write's refusal is attributed to its own operation.
 * Never reaches a client.
 */
public final class StagedWritesRefused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StagedWritesRefused(StorageException refusal) { super(refusal.getMessage(), refusal); }

    /** One attempt of a unit in a transaction of its own, its writes staged or not. */
    @FunctionalInterface
    public interface Attempt<T> {
        T run(boolean staged);
    }

    /** The unit staged; when the database refused a staged write, once more unstaged in a new transaction. */
    public static <T> T stagedThenUnstaged(Attempt<T> attempt) {
        try {
            return attempt.run(true);
        } catch (StagedWritesRefused refused) {
            return attempt.run(false);
        }
    }
}

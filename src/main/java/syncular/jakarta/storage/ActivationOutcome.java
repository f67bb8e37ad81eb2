package syncular.jakarta.storage;

/** Non-throwing outcomes of {@code activateCheckpoint} (seeds/003): retry on {@code STALE}, restart otherwise. */
public enum ActivationOutcome { ACTIVATED, STALE, UNVERIFIABLE }

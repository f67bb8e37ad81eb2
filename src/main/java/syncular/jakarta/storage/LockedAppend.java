package syncular.jakarta.storage;

/**
 * What {@link StorageTransaction#lockAndAppend} found and did in its one round trip: the serve-gate token read under
 * the lock, whether the commit's result was {@code stored} already (by another transaction; the append then must not
 * commit), the appended commit's seq, the partition's horizon, and how long the lock had been held when the round
 * trip's last statement ran, by the database's clock.
 */
public record LockedAppend(ServeGate gate, boolean stored, long commitSeq, long horizonSeq, long heldNanos) { }

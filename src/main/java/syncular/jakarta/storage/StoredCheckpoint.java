package syncular.jakarta.storage;

/**
 * One {@code sync_backfill_checkpoints} row (seeds/001 {@code StoredCheckpoint}). {@code watermark} is the highest
 * source commitSeq the projection was derived from; {@code ownerEpoch} is the claim counter that makes a superseded
 * runner's writes no-ops; {@code pausedAtMs} (ours, issue 20) is when an operator paused it, null while it runs.
 * Never served to clients.
 */
public record StoredCheckpoint(String partition, String name, int schemaVersion, CheckpointState state,
                               long watermark, long ownerEpoch, long observedRows, long updatedAtMs,
                               Long pausedAtMs) {
    public boolean paused() { return pausedAtMs != null; }
}

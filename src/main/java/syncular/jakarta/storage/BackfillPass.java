package syncular.jakarta.storage;

/**
 * The position of one backfill pass (RFC 0007, issue 7), kept per (partition, checkpoint name) and written on the
 * batch's own transaction, so a batch's projection commit, its log entry, the checkpoint watermark and the position
 * commit together or not at all. {@code watermark} is the source coverage seq the pass certifies (captured when it
 * started, passed unchanged to every advance and to the activation). A full pass is at ({@code sourceIndex},
 * {@code afterRowId}) over the sorted source tables; a catch-up pass reads the log in ({@code fromSeq},
 * {@code watermark}] and is at ({@code afterSeq}, {@code afterIdx}).
 */
public record BackfillPass(String partition, String name, int pass, Mode mode, int sourceIndex, String afterRowId,
                           long afterSeq, int afterIdx, long fromSeq, long watermark, boolean exhausted,
                           long passRows, long batches, long startedAtMs, long updatedAtMs) {
    /** How a pass reads its sources: the current rows by key, or the rows the log changed after the watermark. */
    public enum Mode {
        FULL("full"), CATCH_UP("catch-up");

        private final String stored;

        Mode(String stored) { this.stored = stored; }

        /** The stored form. */
        public String stored() { return stored; }

        public static Mode fromStored(String s) { return s.equals("full") ? FULL : CATCH_UP; }
    }

    public static BackfillPass fullFrom(String partition, String name, int pass, long watermark, long nowMs) {
        return new BackfillPass(partition, name, pass, Mode.FULL, 0, null, 0, 0, 0, watermark, false, 0, 0, nowMs,
                nowMs);
    }

    /** Starts after every change at or below {@code fromSeq}: no idx exceeds MAX_VALUE, so (from, MAX) is past them. */
    public static BackfillPass catchUpFrom(String partition, String name, int pass, long fromSeq, long watermark,
                                           long nowMs) {
        return new BackfillPass(partition, name, pass, Mode.CATCH_UP, 0, null, fromSeq, Integer.MAX_VALUE, fromSeq,
                watermark, false, 0, 0, nowMs, nowMs);
    }

    /** The position as text: part of the deterministic clientCommitId of the batch that starts here. */
    public String positionKey() {
        return mode == Mode.FULL ? sourceIndex + "/" + (afterRowId == null ? "" : afterRowId)
                : afterSeq + "/" + afterIdx;
    }

    /** One change-log entry a catch-up pass visits. */
    public record ChangedRow(long commitSeq, int idx, String table, String rowId) { }

    /** One checkpoint joined with its pass position (absent before the first batch), for the operator surface. */
    public record Progress(StoredCheckpoint checkpoint, java.util.Optional<BackfillPass> pass) { }
}

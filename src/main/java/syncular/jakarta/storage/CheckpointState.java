package syncular.jakarta.storage;

/** RFC 0007 backfill checkpoint lifecycle (UPSTREAM-SERVER §3.4); {@code ACTIVATED} is terminal. */
public enum CheckpointState {
    DECLARED("declared"), BACKFILLING("backfilling"), ACTIVATED("activated");

    private final String stored;

    CheckpointState(String stored) { this.stored = stored; }

    /** The spelling in {@code sync_backfill_checkpoints.state}. */
    public String stored() { return stored; }

    public static CheckpointState fromStored(String s) {
        for (CheckpointState st : values()) if (st.stored.equals(s)) return st;
        throw new IllegalArgumentException("unknown checkpoint state");
    }
}

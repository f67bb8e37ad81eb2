package syncular.jakarta.wire;

/**
 * The envelope wire versions this codec speaks (SPEC §1.2, §9). Frame layouts take the wire version as a parameter
 * everywhere rather than assuming one; callers ask a capability here ({@link #hasLogEpoch},
 * {@link #hasSparsePayloads}, {@link #hasConflictColumns}) instead of comparing version numbers.
 *
 * <p>Wire 3 has the wire-2 header layout (REQ_HEADER/RESP_HEADER are byte-identical, WIRE3-DELTA §1.2). It differs
 * in two places only: a PUSH_COMMIT {@code payload} is a sparse row ({@link SparseRowCodec}, SPEC §2.4 @008c36d5),
 * which the envelope codec still carries as opaque bytes, and a PUSH_RESULT conflict record ends with
 * {@code conflictColumns} (§6.3). Upstream reads only version 3; this codec keeps 1 and 2 beside it.
 */
public final class WireVersion {
    /** Wire version 1: no log epoch. */
    public static final int V1 = 1;
    /** Wire version 2: REQ_HEADER.logEpoch and RESP_HEADER.logEpoch/resetRequired (SPEC §2.1). */
    public static final int V2 = 2;
    /** Wire version 3: sparse push payloads and PUSH_RESULT conflict {@code conflictColumns} (SPEC @008c36d5 §9). */
    public static final int V3 = 3;
    public static final int MIN = V1;
    public static final int MAX = V3;

    private WireVersion() { }

    public static boolean isSupported(int wireVersion) { return wireVersion >= MIN && wireVersion <= MAX; }

    /** Whether the headers of this wire version carry the partition log epoch (SPEC §1.5, §1.6, §2.1). */
    public static boolean hasLogEpoch(int wireVersion) { return wireVersion >= V2; }

    /**
     * Whether a PUSH_COMMIT upsert {@code payload} of this wire version is a sparse row (SPEC @008c36d5 §2.4, §6.1)
     * rather than a full row ({@link RowCodec}). The envelope codec never decodes payloads; the push pipeline does.
     */
    public static boolean hasSparsePayloads(int wireVersion) { return wireVersion >= V3; }

    /** Whether a PUSH_RESULT conflict record of this wire version ends with {@code conflictColumns} (§6.3). */
    public static boolean hasConflictColumns(int wireVersion) { return wireVersion >= V3; }

    static void require(int wireVersion) {
        if (!isSupported(wireVersion)) throw new IllegalArgumentException("unsupported wire version " + wireVersion);
    }
}

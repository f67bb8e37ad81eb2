package syncular.jakarta.wire;

/**
 * The envelope wire versions this codec speaks (SPEC §1.2, §9). Frame layouts take the wire version as a parameter
 * everywhere rather than assuming one, so a third version adds cases instead of rewriting callers.
 */
public final class WireVersion {
    /** Wire version 1: no log epoch. */
    public static final int V1 = 1;
    /** Wire version 2: REQ_HEADER.logEpoch and RESP_HEADER.logEpoch/resetRequired (SPEC §2.1). */
    public static final int V2 = 2;
    public static final int MIN = V1;
    public static final int MAX = V2;

    private WireVersion() { }

    public static boolean isSupported(int wireVersion) { return wireVersion >= MIN && wireVersion <= MAX; }

    /** Whether the headers of this wire version carry the partition log epoch (SPEC §1.5, §1.6, §2.1). */
    public static boolean hasLogEpoch(int wireVersion) { return wireVersion >= V2; }

    static void require(int wireVersion) {
        if (!isSupported(wireVersion)) throw new IllegalArgumentException("unsupported wire version " + wireVersion);
    }
}

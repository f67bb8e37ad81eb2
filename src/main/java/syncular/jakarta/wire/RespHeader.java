package syncular.jakarta.wire;

/**
 * RESP_HEADER (0x10), the first frame of every response (SPEC §1.6). The schema fields are {@code opt(i32)}
 * ({@code null} = absent). {@code logEpoch} and {@code resetRequired} exist only from wire version 2, where both are
 * required; on wire version 1 they must be {@code null}. Wire 3 keeps the wire-2 layout. The encoder checks that
 * against the message's version.
 */
public record RespHeader(Integer requiredSchemaVersion, Integer latestSchemaVersion, String logEpoch,
        Boolean resetRequired) implements ResponseFrame {
    public RespHeader {
        if (logEpoch != null && logEpoch.isEmpty()) throw new IllegalArgumentException("RESP_HEADER.logEpoch must be non-empty");
        if ((logEpoch == null) != (resetRequired == null)) {
            throw new IllegalArgumentException("RESP_HEADER.logEpoch and resetRequired come together (wire v2)");
        }
    }

    /** A wire-v1 header. */
    public static RespHeader v1(Integer requiredSchemaVersion, Integer latestSchemaVersion) {
        return new RespHeader(requiredSchemaVersion, latestSchemaVersion, null, null);
    }

    /** A wire-v2 header, also the wire-3 layout. */
    public static RespHeader v2(Integer requiredSchemaVersion, Integer latestSchemaVersion, String logEpoch, boolean resetRequired) {
        return new RespHeader(requiredSchemaVersion, latestSchemaVersion, Checks.nonEmpty(logEpoch, "RESP_HEADER.logEpoch"), resetRequired);
    }

    @Override public int frameType() { return FrameType.RESP_HEADER.code(); }
}

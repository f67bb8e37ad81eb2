package syncular.jakarta.wire;

/**
 * REQ_HEADER (0x01), the first frame of every request (SPEC §1.5). {@code logEpoch} exists from wire version 2
 * ({@code opt(str)}, SPEC §2.1): {@code null} means absent, which on wire v2 asks for epoch acquisition.
 */
public record ReqHeader(String clientId, int schemaVersion, String logEpoch) implements RequestFrame {
    public ReqHeader {
        Checks.nonEmpty(clientId, "REQ_HEADER.clientId");
        if (schemaVersion < 1) throw new IllegalArgumentException("REQ_HEADER.schemaVersion must be ≥ 1");
        if (logEpoch != null && logEpoch.isEmpty()) throw new IllegalArgumentException("REQ_HEADER.logEpoch must be non-empty");
    }

    /** A wire-v1 style header (no epoch). */
    public ReqHeader(String clientId, int schemaVersion) { this(clientId, schemaVersion, null); }

    @Override public int frameType() { return FrameType.REQ_HEADER.code(); }
}

package syncular.jakarta.wire;

import java.util.Optional;

/**
 * The frame type registry of wire versions 1 and 2 (SPEC §1.2). Reserved and unregistered codes have no constant:
 * {@link #forCode} returns empty for them, and the grammar skips and preserves them as {@link UnknownFrame}s.
 */
public enum FrameType {
    END(0x00, null),
    REQ_HEADER(0x01, MsgKind.REQUEST),
    PUSH_COMMIT(0x02, MsgKind.REQUEST),
    PULL_HEADER(0x03, MsgKind.REQUEST),
    SUBSCRIPTION(0x04, MsgKind.REQUEST),
    RESP_HEADER(0x10, MsgKind.RESPONSE),
    PUSH_RESULT(0x11, MsgKind.RESPONSE),
    SUB_START(0x12, MsgKind.RESPONSE),
    COMMIT(0x13, MsgKind.RESPONSE),
    SEGMENT_REF(0x14, MsgKind.RESPONSE),
    SEGMENT_INLINE(0x15, MsgKind.RESPONSE),
    SUB_END(0x16, MsgKind.RESPONSE),
    LEASE(0x19, MsgKind.RESPONSE),
    PUSH_RESULT_DETAILS(0x1B, MsgKind.RESPONSE),
    ERROR(0x1F, MsgKind.RESPONSE);

    private static final FrameType[] BY_CODE = new FrameType[256];
    static {
        for (FrameType t : values()) BY_CODE[t.code] = t;
    }

    private final int code;
    private final MsgKind kind;

    FrameType(int code, MsgKind kind) {
        this.code = code;
        this.kind = kind;
    }

    /** The type byte on the wire. */
    public int code() { return code; }

    /** The message kind the frame belongs to; {@code null} for END (both). */
    public MsgKind kind() { return kind; }

    /** The registered type for {@code code}, or empty for reserved and unregistered codes (SPEC §1.2 rule 2). */
    public static Optional<FrameType> forCode(int code) {
        return code < 0 || code > 255 ? Optional.empty() : Optional.ofNullable(BY_CODE[code]);
    }

    /** True iff {@code code} has a defined layout in wire versions 1 and 2 (END included). */
    public static boolean isRegistered(int code) {
        return code >= 0 && code <= 255 && BY_CODE[code] != null;
    }
}

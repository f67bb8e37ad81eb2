package syncular.jakarta.wire;

/**
 * SUB_END (0x16): closes one subscription section (SPEC §4.4). {@code bootstrapStateJson} is the raw resume token,
 * {@code null} when absent (bootstrap complete or incremental).
 */
public record SubEnd(long nextCursor, String bootstrapStateJson) implements ResponseFrame {
    public SubEnd {
        Checks.safe(nextCursor, "SUB_END.nextCursor");
        Checks.json(bootstrapStateJson, "SUB_END.bootstrapState");
    }

    @Override public int frameType() { return FrameType.SUB_END.code(); }
}

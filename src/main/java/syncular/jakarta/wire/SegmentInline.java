package syncular.jakarta.wire;

/**
 * SEGMENT_INLINE (0x15): the whole payload is one SSG2 rows segment (SPEC §5.7), structurally validated at decode
 * against its own column table; matching the receiver's schema is the receiver's check.
 */
public record SegmentInline(byte[] payload) implements ResponseFrame {
    public SegmentInline {
        if (payload == null) throw new IllegalArgumentException("SEGMENT_INLINE.payload is required");
    }

    @Override public int frameType() { return FrameType.SEGMENT_INLINE.code(); }

    /** The payload decoded (FLOAT values as {@link Double}). */
    public RowsSegment segment() { return RowsSegmentDecoder.decode(payload); }
}

package syncular.jakarta.wire;

/**
 * One SSP2 frame (SPEC §1.2). Records are immutable except that {@code byte[]} components (row payloads, segment
 * bytes, unknown payloads) are shared, not copied, for throughput: treat them as read-only.
 */
public sealed interface Frame permits RequestFrame, ResponseFrame {
    /** The frame type byte. */
    int frameType();
}

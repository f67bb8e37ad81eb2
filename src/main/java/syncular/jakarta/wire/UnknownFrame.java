package syncular.jakarta.wire;

/**
 * A frame of a reserved or unregistered type, skipped by the grammar and preserved in place, bytes and position,
 * on re-encode (SPEC §1.2 rule 2). A registered type can never be "unknown": the constructor refuses it.
 */
public record UnknownFrame(int frameType, byte[] payload) implements RequestFrame, ResponseFrame {
    public UnknownFrame {
        if (frameType < 0 || frameType > 0xff || FrameType.isRegistered(frameType)) {
            throw new IllegalArgumentException("frame type " + frameType + " is registered or out of range, not unknown");
        }
        if (payload == null) throw new IllegalArgumentException("UNKNOWN.payload is required");
    }
}

package syncular.jakarta.wire;

/**
 * The SSP2 envelope (SPEC §1.2): an 8-byte header ({@code "SSP2"}, wireVersion u16, msgKind u8, flags u8 = 0), then
 * frames {@code type u8 · length u32 · payload}, ended by END ({@code 00 00000000}) with nothing after it.
 */
public final class Envelope {
    /** {@code "SSP2"}. */
    static final byte[] MAGIC = {0x53, 0x53, 0x50, 0x32};
    public static final int HEADER_BYTES = 8;

    private Envelope() { }

    /** The header fields, read without decoding any frame. */
    public record Header(int wireVersion, MsgKind kind) { }

    /**
     * Reads and checks the 8-byte header: magic, a supported wire version (checked before any frame is read),
     * msgKind 1 or 2, flags 0.
     */
    public static Header readHeader(byte[] b, int off, int len) {
        if (len < HEADER_BYTES) throw DecodeException.invalid("envelope header: needs 8 bytes, " + len + " present");
        for (int i = 0; i < 4; i++) {
            if (b[off + i] != MAGIC[i]) throw DecodeException.invalid("envelope magic is not SSP2");
        }
        int version = (b[off + 4] & 0xff) | (b[off + 5] & 0xff) << 8;
        if (!WireVersion.isSupported(version)) throw DecodeException.invalid("unsupported wire version " + version);
        int kind = b[off + 6] & 0xff;
        MsgKind k = kind == 1 ? MsgKind.REQUEST : kind == 2 ? MsgKind.RESPONSE : null;
        if (k == null) throw DecodeException.invalid("msgKind byte " + kind + " is neither request (1) nor response (2)");
        if (b[off + 7] != 0) throw DecodeException.invalid("envelope flags must be 00");
        return new Header(version, k);
    }

    /** Reads the header of a whole message. */
    public static Header readHeader(byte[] message) { return readHeader(message, 0, message.length); }

    /** Writes the 8-byte header. */
    static void writeHeader(WireWriter w, int wireVersion, MsgKind kind) {
        WireVersion.require(wireVersion);
        w.raw(MAGIC).u16(wireVersion).u8(kind.code()).u8(0);
    }

    /** Receives each frame as soon as it is delimited: type byte, payload offset and length in the array. */
    interface FrameVisitor {
        void frame(int type, int offset, int length);
    }

    /**
     * Walks the frames after the header up to END, handing each to {@code visitor} as soon as its length is checked
     * against the remaining bytes — so a frame's own decode error wins over a framing error further on, as in the
     * reference decoder. END must have length 0 and be the last byte sequence (SPEC §1.2 rule 1); a missing END is
     * truncation.
     */
    static void frames(byte[] b, int off, int len, FrameVisitor visitor) {
        int pos = off + HEADER_BYTES;
        int end = off + len;
        while (true) {
            if (pos == end) throw DecodeException.invalid("message truncated: no END frame");
            if (end - pos < 5) {
                throw DecodeException.invalid("frame header at offset " + (pos - off) + ": needs 5 bytes, " + (end - pos) + " remain");
            }
            int type = b[pos] & 0xff;
            long length = Integer.toUnsignedLong((b[pos + 1] & 0xff) | (b[pos + 2] & 0xff) << 8 | (b[pos + 3] & 0xff) << 16
                    | (b[pos + 4] & 0xff) << 24);
            pos += 5;
            if (length > end - pos) {
                throw DecodeException.invalid("frame at offset " + (pos - 5 - off) + ": length " + length + " exceeds the "
                        + (end - pos) + " remaining bytes");
            }
            if (type == 0) {
                if (length != 0) throw DecodeException.invalid("END frame must have length 0");
                if (pos != end) throw DecodeException.invalid((end - pos) + " bytes after END");
                return;
            }
            visitor.frame(type, pos, (int) length);
            pos += (int) length;
        }
    }
}

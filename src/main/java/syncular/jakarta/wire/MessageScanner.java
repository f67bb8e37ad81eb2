package syncular.jakarta.wire;

import java.util.Arrays;
import java.util.Optional;

/**
 * Finds where one SSP2 message ends in a byte stream that arrives in arbitrary chunks (SPEC §1.4, §8.7: socket
 * rounds send a request as ≥ 1 {@code 0x01} chunks ending at its END). Checks the 8-byte header as soon as it is
 * complete (an invalid header has no findable end: connection-fatal, §8.7) and then walks frame length prefixes;
 * decoding the message stays with {@link RequestDecoder}/{@link ResponseDecoder}. Buffering is bounded by
 * {@code maxBytes}. Not thread-safe; one scanner per message.
 */
public final class MessageScanner {
    private final long maxBytes;
    private byte[] buf = new byte[1024];
    private int len;
    private int next = -1; // start of the next frame header; −1 until the envelope header is complete
    private boolean complete;

    /** A complete message and how many bytes were fed past its END (a §8.7 violation for the caller to act on). */
    public record Scanned(byte[] message, int excess) { }

    public MessageScanner(long maxBytes) {
        if (maxBytes < Envelope.HEADER_BYTES + 5) throw new IllegalArgumentException("maxBytes too small");
        this.maxBytes = maxBytes;
    }

    /** True once any byte was fed. */
    public boolean started() { return len > 0; }

    public Optional<Scanned> feed(byte[] chunk) { return feed(chunk, 0, chunk.length); }

    /**
     * Appends a chunk; returns the message once its END frame is complete. Throws {@link DecodeException} on an
     * invalid header or when the message would exceed {@code maxBytes}; {@link IllegalStateException} when fed after
     * completion.
     */
    public Optional<Scanned> feed(byte[] chunk, int off, int n) {
        if (complete) throw new IllegalStateException("message already complete");
        // the buffer holds at most maxBytes plus the current chunk (which the caller holds anyway)
        // growth stops doubling at maxBytes: a socket round's buffer must not pin twice its cap
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, (int) Math.max(len + n, Math.min(buf.length * 2L, maxBytes)));
        }
        System.arraycopy(chunk, off, buf, len, n);
        len += n;
        if (next < 0) {
            if (len < Envelope.HEADER_BYTES) return Optional.empty();
            Envelope.readHeader(buf, 0, Envelope.HEADER_BYTES);
            next = Envelope.HEADER_BYTES;
        }
        while (len - next >= 5) {
            int type = buf[next] & 0xff;
            long frameLength = Integer.toUnsignedLong((buf[next + 1] & 0xff) | (buf[next + 2] & 0xff) << 8
                    | (buf[next + 3] & 0xff) << 16 | (buf[next + 4] & 0xff) << 24);
            long end = next + 5L + frameLength;
            if (end > maxBytes) throw DecodeException.invalid("message exceeds " + maxBytes + " bytes");
            if (len < end) return Optional.empty();
            next = (int) end;
            if (type == 0) {
                complete = true;
                return Optional.of(new Scanned(Arrays.copyOf(buf, next), len - next));
            }
        }
        if (len > maxBytes) throw DecodeException.invalid("message exceeds " + maxBytes + " bytes");
        return Optional.empty();
    }
}

package syncular.jakarta.wire;

/**
 * PULL_HEADER (0x03): pull limits and the {@code accept} bitmask (SPEC §4.2). Limits are carried as sent; clamping
 * is the server's job. Bits 4–7 of {@code accept} must be zero (a decode error); lacking bits 0 and 1 is a request
 * validation error, not a decode error.
 */
public record PullHeader(int limitCommits, int limitSnapshotRows, int maxSnapshotPages, int accept) implements RequestFrame {
    public static final int ACCEPT_INLINE_ROWS = 1;
    public static final int ACCEPT_EXTERNAL_ROWS = 2;
    public static final int ACCEPT_SQLITE = 4;
    public static final int ACCEPT_SIGNED_URLS = 8;

    public PullHeader {
        if (accept < 0 || accept > 0x0f) throw new IllegalArgumentException("PULL_HEADER.accept must be 0..15");
    }

    @Override public int frameType() { return FrameType.PULL_HEADER.code(); }

    public boolean accepts(int bit) { return (accept & bit) != 0; }
}

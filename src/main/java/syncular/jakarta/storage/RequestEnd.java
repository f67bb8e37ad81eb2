package syncular.jakarta.storage;

import java.util.Objects;

/**
 * A request's end riding on its last read (issue 15), a commit window: the client record the request stores when that
 * window turns out to be the rest of the log through the request's head (no page limit reached), then the serve-gate
 * re-read of read-verify-refuse (RFC 0007), in the window's round trip. A request whose last read is anything else,
 * or whose window is cut, ends on its own round trip ({@link StorageSession#recordClientsThenReadGate}).
 */
public record RequestEnd(ClientRecord recordIfComplete, int runningSchemaVersion) {
    public RequestEnd {
        Objects.requireNonNull(recordIfComplete, "recordIfComplete");
    }
}

package syncular.jakarta.wire;

import java.util.List;

/** A decoded (or to-be-encoded) response: wire version and frames in wire order, END omitted (SPEC §1.6). */
public record ResponseMessage(int wireVersion, List<ResponseFrame> frames) {
    public ResponseMessage {
        frames = Checks.list(frames, "response frames");
    }
}

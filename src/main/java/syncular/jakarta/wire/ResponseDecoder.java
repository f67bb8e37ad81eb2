package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Decodes one SSP2 response (SPEC §1.2, §1.6) in the wire version its header names: every frame layout in order
 * while the envelope is walked, then the grammar after END (the reference order). SEGMENT_INLINE payloads are
 * checked structurally (§5.7). Stateless and thread-safe.
 */
public final class ResponseDecoder {
    private ResponseDecoder() { }

    public static ResponseMessage decode(byte[] message) { return decode(message, 0, message.length); }

    public static ResponseMessage decode(byte[] b, int off, int len) {
        Envelope.Header h = Envelope.readHeader(b, off, len);
        if (h.kind() != MsgKind.RESPONSE) throw DecodeException.invalid("expected a response message, got a request");
        List<ResponseFrame> frames = new ArrayList<>();
        Envelope.frames(b, off, len, (type, at, n) -> frames.add(FrameCodec.readResponseFrame(type, b, at, n, h.wireVersion())));
        ResponseGrammar g = new ResponseGrammar(true);
        for (ResponseFrame f : frames) g.accept(f);
        g.finish();
        return new ResponseMessage(h.wireVersion(), frames);
    }
}

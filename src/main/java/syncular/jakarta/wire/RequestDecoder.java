package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Decodes one SSP2 request (SPEC §1.2, §1.5) in the wire version its header names. Frames are decoded in order while
 * the envelope is walked, and the grammar is checked only after END — the reference order, so both report the same
 * code for the same bytes (e.g. {@code sync.empty_commit} wins over a grammar or later framing error). Stateless and
 * thread-safe.
 */
public final class RequestDecoder {
    private RequestDecoder() { }

    public static RequestMessage decode(byte[] message) { return decode(message, 0, message.length); }

    public static RequestMessage decode(byte[] b, int off, int len) {
        Envelope.Header h = Envelope.readHeader(b, off, len);
        if (h.kind() != MsgKind.REQUEST) throw DecodeException.invalid("expected a request message, got a response");
        List<RequestFrame> frames = new ArrayList<>();
        Envelope.frames(b, off, len, (type, at, n) -> frames.add(FrameCodec.readRequestFrame(type, b, at, n, h.wireVersion())));
        RequestGrammar g = new RequestGrammar(true);
        for (RequestFrame f : frames) g.accept(f);
        g.finish();
        return new RequestMessage(h.wireVersion(), frames);
    }
}

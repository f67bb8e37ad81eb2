package syncular.jakarta.wire;

/**
 * Encodes a request (SPEC §1.2, §1.5), for test clients and tools. The grammar is checked; a violation is
 * {@link IllegalStateException}, a value the wire cannot carry {@link IllegalArgumentException}.
 */
public final class RequestEncoder {
    private RequestEncoder() { }

    public static byte[] encode(RequestMessage m) {
        RequestGrammar g = new RequestGrammar(false);
        for (RequestFrame f : m.frames()) g.accept(f);
        g.finish();
        WireWriter w = new WireWriter(512);
        Envelope.writeHeader(w, m.wireVersion(), MsgKind.REQUEST);
        for (RequestFrame f : m.frames()) writeFrame(w, f, m.wireVersion());
        w.u8(0).u32(0);
        return w.toByteArray();
    }

    /** Appends {@code type · length · payload}, patching the length after the payload is written. */
    static void writeFrame(WireWriter w, Frame f, int wireVersion) {
        w.u8(f.frameType());
        int lenAt = w.size();
        w.u32(0);
        FrameCodec.writePayload(w, f, wireVersion);
        w.patchU32(lenAt, w.size() - lenAt - 4);
    }
}

package syncular.jakarta.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Writes one response frame by frame to an {@link OutputStream} (SPEC §1.4, §1.6), in the wire version of its
 * request (§9): the header on construction, each frame as it is given, END on {@link #end()}. The grammar is
 * enforced as frames arrive ({@link IllegalStateException} on a violation), so a producer cannot emit a response a
 * client would reject. Each frame is built in a reused buffer and handed to the stream in one write; the stream is not
 * flushed or closed here. Not thread-safe.
 */
public final class ResponseWriter {
    private final OutputStream out;
    private final int wireVersion;
    private final ResponseGrammar grammar = new ResponseGrammar(false);
    private final WireWriter buf = new WireWriter(4096);
    private long bytesWritten;
    private boolean ended;

    public ResponseWriter(OutputStream out, int wireVersion) {
        WireVersion.require(wireVersion);
        this.out = out;
        this.wireVersion = wireVersion;
        buf.reset();
        Envelope.writeHeader(buf, wireVersion, MsgKind.RESPONSE);
        flushBuffer();
    }

    /** A writer in the wire version of {@code request}, as SPEC §9 requires of every response. */
    public static ResponseWriter forRequest(OutputStream out, RequestMessage request) {
        return new ResponseWriter(out, request.wireVersion());
    }

    public int wireVersion() { return wireVersion; }

    /** Bytes handed to the stream so far. */
    public long bytesWritten() { return bytesWritten; }

    /** True while a SUB_START has no SUB_END yet (an ERROR may interrupt it). */
    public boolean inSection() { return grammar.inSection(); }

    public ResponseWriter write(ResponseFrame f) {
        if (ended) throw new IllegalStateException("response already ended");
        grammar.accept(f);
        buf.reset();
        RequestEncoder.writeFrame(buf, f, wireVersion);
        flushBuffer();
        return this;
    }

    /** Writes END; the grammar must be complete (an open section only after ERROR). */
    public void end() {
        if (ended) throw new IllegalStateException("response already ended");
        grammar.finish();
        ended = true;
        buf.reset();
        buf.u8(0).u32(0);
        flushBuffer();
    }

    private void flushBuffer() {
        try {
            buf.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        bytesWritten += buf.size();
    }
}

package syncular.jakarta.wire;

import java.io.ByteArrayOutputStream;

/** Encodes a whole response to bytes through a {@link ResponseWriter} (SPEC §1.6). */
public final class ResponseEncoder {
    private ResponseEncoder() { }

    public static byte[] encode(ResponseMessage m) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        ResponseWriter w = new ResponseWriter(out, m.wireVersion());
        for (ResponseFrame f : m.frames()) w.write(f);
        w.end();
        return out.toByteArray();
    }
}

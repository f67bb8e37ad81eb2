package syncular.jakarta.sync.bench;

import java.io.ByteArrayOutputStream;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;

/**
 * A JDK {@link WebSocket.Listener} that joins each message's fragments and hands over whole messages, text or
 * binary, asking for the next fragment after each: the part every realtime test client and bench socket shares.
 */
public abstract class WholeMessages implements WebSocket.Listener {
    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();

    /** A whole text message arrived. */
    protected abstract void onWholeText(String message);

    /** A whole binary message arrived. */
    protected abstract void onWholeBinary(byte[] message);

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        text.append(data);
        if (last) {
            String message = text.toString();
            text.setLength(0);
            onWholeText(message);
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        binary.write(b, 0, b.length);
        if (last) {
            byte[] message = binary.toByteArray();
            binary.reset();
            onWholeBinary(message);
        }
        webSocket.request(1);
        return null;
    }
}

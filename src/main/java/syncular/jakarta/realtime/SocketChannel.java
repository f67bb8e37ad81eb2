package syncular.jakarta.realtime;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * One connected socket as the hub sees it. Sends are asynchronous and the {@link Outbox} keeps at most one in
 * flight, as jakarta.websocket's async remote requires; {@code done} gets {@code null} on success or the failure.
 */
public interface SocketChannel {
    void sendText(String text, Consumer<Throwable> done);

    void sendBinary(ByteBuffer data, Consumer<Throwable> done);

    /** Closes the socket with a WebSocket close code and a short reason (≤ 123 bytes). */
    void close(int code, String reason);
}

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

    /**
     * A WebSocket ping (RFC 6455 §5.5.2): every conformant client answers with a pong without application code, which
     * is how a client that sends nothing (§8.5 specifies no client ping) still shows it is alive. Default: none.
     */
    default void sendPing(Consumer<Throwable> done) { done.accept(null); }

    /** Closes the socket with a WebSocket close code and a short reason (≤ 123 bytes). */
    void close(int code, String reason);
}

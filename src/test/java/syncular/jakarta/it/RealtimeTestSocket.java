package syncular.jakarta.it;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import syncular.jakarta.sync.bench.PlainWebSocket;
import syncular.jakarta.sync.bench.WholeMessages;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.RealtimeControl;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;

/**
 * A realtime client over the JDK's {@link WebSocket}: every whole message lands in a queue (text as String, binary as
 * byte[] with its channel tag), and the close code and reason are kept.
 */
final class RealtimeTestSocket extends WholeMessages implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    final LinkedBlockingQueue<Object> messages = new LinkedBlockingQueue<>();
    final CompletableFuture<String> closed = new CompletableFuture<>();   // "code reason"
    WebSocket ws;

    static RealtimeTestSocket open(URI base, String query, String... headers) throws Exception {
        URI uri = URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?" + query);
        RealtimeTestSocket s = new RealtimeTestSocket();
        WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10));
        for (int i = 0; i + 1 < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        s.ws = b.buildAsync(uri, s).get(20, TimeUnit.SECONDS);
        return s;
    }

    @Override
    protected void onWholeText(String message) { messages.add(message); }

    @Override
    protected void onWholeBinary(byte[] message) { messages.add(message); }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        closed.complete(statusCode + " " + reason);
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        closed.complete("error " + error);
    }

    /** The next message, or an AssertionError after {@code seconds}. */
    Object next(int seconds) throws InterruptedException {
        Object m = messages.poll(seconds, TimeUnit.SECONDS);
        if (m == null) throw new AssertionError("no realtime message within " + seconds + " s; closed: "
                + closed.getNow("no"));
        return m;
    }

    /** The next text message that is not a heartbeat, parsed. */
    Map<?, ?> nextEvent(int seconds) throws InterruptedException {
        while (true) {
            Object m = next(seconds);
            if (!(m instanceof String s)) throw new AssertionError("expected a text message, got binary tag " + ((byte[]) m)[0]);
            Map<?, ?> event = (Map<?, ?>) Json.parse(s);
            if (!"heartbeat".equals(event.get("event"))) return event;
        }
    }

    /** The next binary message that is a delta (0x00), decoded; fails on anything else but heartbeats. */
    ResponseMessage nextDelta(int seconds) throws InterruptedException {
        while (true) {
            Object m = next(seconds);
            if (m instanceof String s) {
                if (s.contains("\"heartbeat\"")) continue;
                throw new AssertionError("expected a delta, got " + s);
            }
            byte[] b = (byte[]) m;
            if (b[0] != RealtimeControl.TAG_DELTA) throw new AssertionError("expected tag 0x00, got " + b[0]);
            return ResponseDecoder.decode(Arrays.copyOfRange(b, 1, b.length));
        }
    }

    /** Nothing but heartbeats arrives within {@code millis}. */
    void expectSilence(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) return;
            Object m = messages.poll(left, TimeUnit.NANOSECONDS);
            if (m == null) return;
            if (m instanceof String s && s.contains("\"heartbeat\"")) continue;
            throw new AssertionError("expected silence, got " + (m instanceof String s ? s : "binary tag " + ((byte[]) m)[0]));
        }
    }

    void send(String json) throws Exception {
        ws.sendText(json, true).get(10, TimeUnit.SECONDS);
    }

    void sendBinary(byte[] tagged) throws Exception {
        ws.sendBinary(ByteBuffer.wrap(tagged), true).get(10, TimeUnit.SECONDS);
    }

    /** Sends a request as one 0x01 chunk and collects the 0x01 response chunks through END. */
    byte[] round(byte[] request) throws Exception {
        sendBinary(PlainWebSocket.tagged(RealtimeControl.TAG_ROUND, request));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            Object m = next(30);
            if (m instanceof String) continue;   // wakes and heartbeats may interleave as text
            byte[] b = (byte[]) m;
            if (b[0] != RealtimeControl.TAG_ROUND) throw new AssertionError("a 0x00 delta inside a round's stream");
            out.write(b, 1, b.length - 1);
            byte[] all = out.toByteArray();
            if (endsAtEnd(all)) return all;
        }
    }

    /** Whether the bytes hold a complete message (header + frames through END). */
    static boolean endsAtEnd(byte[] all) {
        int p = 8;
        while (p + 5 <= all.length) {
            int type = all[p] & 0xff;
            long len = (all[p + 1] & 0xffL) | (all[p + 2] & 0xffL) << 8 | (all[p + 3] & 0xffL) << 16
                    | (all[p + 4] & 0xffL) << 24;
            if (p + 5 + len > all.length) return false;
            p += 5 + (int) len;
            if (type == 0) return p == all.length;
        }
        return false;
    }

    /** The close code and reason, waiting up to {@code seconds}. */
    String awaitClose(int seconds) throws Exception {
        return closed.get(seconds, TimeUnit.SECONDS);
    }

    static String text(byte[] b) { return new String(b, StandardCharsets.UTF_8); }

    @Override
    public void close() {
        if (ws != null && !ws.isOutputClosed()) ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
        if (ws != null) ws.abort();
    }
}

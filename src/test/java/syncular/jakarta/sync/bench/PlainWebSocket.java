package syncular.jakarta.sync.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One blocking RFC 6455 client connection for the load drivers: the opening handshake (its accept key checked), then
 * whole messages read and written on the caller's thread (fragments joined, pings answered). The JDK
 * {@code WebSocket} hands every message between its selector and the caller's threads, which on the two cores a
 * driver shares with the server under test costs CPU every server then lacks (as its {@code HttpClient} did,
 * {@link PlainHttp}). Not thread-safe: one thread per connection.
 */
public final class PlainWebSocket implements AutoCloseable {
    /** A whole message: text ({@code text} set) or binary ({@code binary} set). */
    public record Message(String text, byte[] binary) {
        public boolean isText() { return text != null; }
    }

    private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private PlainWebSocket(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 16 * 1024);
    }

    /** Connects to {@code uri} ({@code ws:} only) and completes the opening handshake. */
    public static PlainWebSocket connect(URI uri, int timeoutMs) throws IOException {
        return connect(uri, timeoutMs, new Socket());
    }

    /**
     * {@link #connect(URI, int)} over a {@link java.nio.channels.SocketChannel} (in blocking mode), so that the
     * connection can later be {@linkplain #detach detached} to a selector.
     */
    public static PlainWebSocket connectChannel(URI uri, int timeoutMs) throws IOException {
        return connect(uri, timeoutMs, java.nio.channels.SocketChannel.open().socket());
    }

    /** The connection's channel and what this reader had already buffered of it, past the last message read. */
    public record Detached(java.nio.channels.SocketChannel channel, byte[] buffered) { }

    /**
     * Hands the connection over (one made by {@link #connectChannel}): this object must not be used afterwards. The
     * channel is still in blocking mode.
     */
    public Detached detach() throws IOException {
        java.nio.channels.SocketChannel channel = socket.getChannel();
        if (channel == null) throw new IllegalStateException("not connected through a channel");
        out.flush();
        byte[] buffered = in.readNBytes(in.available());
        return new Detached(channel, buffered);
    }

    private static PlainWebSocket connect(URI uri, int timeoutMs, Socket s) throws IOException {
        if (!"ws".equalsIgnoreCase(uri.getScheme())) throw new IllegalArgumentException("ws only: " + uri);
        int port = uri.getPort() > 0 ? uri.getPort() : 80;
        s.setTcpNoDelay(true);
        s.setSoTimeout(timeoutMs);
        s.connect(new InetSocketAddress(uri.getHost(), port), timeoutMs);
        PlainWebSocket ws = new PlainWebSocket(s);
        try {
            ws.handshake(uri, port);
            return ws;
        } catch (IOException | RuntimeException e) {
            ws.close();
            throw e;
        }
    }

    private void handshake(URI uri, int port) throws IOException {
        byte[] nonce = new byte[16];
        ThreadLocalRandom.current().nextBytes(nonce);
        String key = Base64.getEncoder().encodeToString(nonce);
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + port + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        String status = line();
        if (!status.startsWith("HTTP/1.1 101")) throw new IOException("no WebSocket upgrade: " + status);
        String accept = null;
        for (String h = line(); !h.isEmpty(); h = line()) {
            int colon = h.indexOf(':');
            if (colon > 0 && h.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("sec-websocket-accept")) {
                accept = h.substring(colon + 1).trim();
            }
        }
        if (!expectedAccept(key).equals(accept)) throw new IOException("wrong Sec-WebSocket-Accept: " + accept);
    }

    private static String expectedAccept(String key) {
        try {
            return Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                    .digest((key + ACCEPT_GUID).getBytes(StandardCharsets.ISO_8859_1)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder(64);
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) throw new EOFException("the handshake answer ended early");
            if (c != '\r') sb.append((char) c);
        }
        return sb.toString();
    }

    /** The next whole message; answers pings on the way; throws {@link EOFException} at a close frame. */
    public Message read() throws IOException {
        ByteArrayOutputStream joined = null;
        int opcode = -1;
        while (true) {
            int b0 = in.read();
            int b1 = in.read();
            if (b0 < 0 || b1 < 0) throw new EOFException("the connection ended");
            boolean fin = (b0 & 0x80) != 0;
            int op = b0 & 0x0F;
            long length = b1 & 0x7F;
            if (length == 126) length = ((long) read1() << 8) | read1();
            else if (length == 127) {
                length = 0;
                for (int i = 0; i < 8; i++) length = (length << 8) | read1();
            }
            byte[] mask = (b1 & 0x80) != 0 ? in.readNBytes(4) : null;
            if (length > 64L << 20) throw new IOException("a frame of " + length + " bytes");
            byte[] payload = in.readNBytes((int) length);
            if (payload.length != length) throw new EOFException("a frame ended early");
            if (mask != null) for (int i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
            switch (op) {
                case 0x8 -> throw new EOFException("closed by the server");
                case 0x9 -> send(0xA, payload);
                case 0xA -> { }
                default -> {
                    if (op != 0) opcode = op;
                    if (fin && joined == null) return message(opcode, payload);
                    if (joined == null) joined = new ByteArrayOutputStream();
                    joined.write(payload);
                    if (fin) return message(opcode, joined.toByteArray());
                }
            }
        }
    }

    private static Message message(int opcode, byte[] payload) {
        return opcode == 0x1 ? new Message(new String(payload, StandardCharsets.UTF_8), null)
                : new Message(null, payload);
    }

    private int read1() throws IOException {
        int b = in.read();
        if (b < 0) throw new EOFException("a frame header ended early");
        return b;
    }

    /** One binary message, in one masked frame: a realtime tag (SPEC §8.7: 0x01 a round), then {@code payload}. */
    public void sendTagged(int tag, byte[] payload) throws IOException { send(0x2, tagged(tag, payload)); }

    /** A realtime binary message's bytes: the tag (SPEC §8.7), then {@code payload}. */
    public static byte[] tagged(int tag, byte[] payload) {
        byte[] tagged = new byte[payload.length + 1];
        tagged[0] = (byte) tag;
        System.arraycopy(payload, 0, tagged, 1, payload.length);
        return tagged;
    }

    /** One text message, in one masked frame. */
    public void sendText(String text) throws IOException { send(0x1, text.getBytes(StandardCharsets.UTF_8)); }

    private void send(int opcode, byte[] payload) throws IOException {
        out.write(frame(opcode, payload));
        out.flush();
    }

    /** One final client frame (masked, RFC 6455 §5.3) of {@code opcode} carrying {@code payload}. */
    public static byte[] frame(int opcode, byte[] payload) {
        ByteArrayOutputStream f = new ByteArrayOutputStream(payload.length + 14);
        f.write(0x80 | opcode);
        if (payload.length < 126) {
            f.write(0x80 | payload.length);
        } else if (payload.length <= 0xFFFF) {
            f.write(0x80 | 126);
            f.write(payload.length >>> 8);
            f.write(payload.length);
        } else {
            f.write(0x80 | 127);
            for (int shift = 56; shift >= 0; shift -= 8) f.write((int) ((long) payload.length >>> shift));
        }
        byte[] mask = new byte[4];
        ThreadLocalRandom.current().nextBytes(mask);
        f.writeBytes(mask);
        for (int i = 0; i < payload.length; i++) f.write(payload[i] ^ mask[i & 3]);
        return f.toByteArray();
    }

    /** A close frame (1000), then the connection closed without waiting for the server's answer. */
    @Override
    public void close() {
        try {
            send(0x8, new byte[] {0x03, (byte) 0xE8});
        } catch (IOException ignored) {
            // the connection is already gone
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }
}

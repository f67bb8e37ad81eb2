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
import java.util.Locale;

/**
 * One persistent HTTP/1.1 connection of one load-driver thread, blocking, for POST requests: the request written in
 * one flush, the response read on the same thread (status line, headers, a {@code Content-Length} or chunked body).
 * The driver shares the machine's two cores with the server under test and its database, so its own cost per round
 * is part of what every measured server gets: the JDK's {@code HttpClient} hands each exchange between the caller
 * and its selector thread (about 0.27 ms of CPU a push-pull round, 2026-12-05), this does not. The same client
 * drives every target, so the comparison stays side by side.
 *
 * <p>Not thread-safe: one instance per virtual client. A connection the server closed ({@code Connection: close},
 * or an end of stream before a response began on a reused connection, the keep-alive race) is replaced; a request is
 * sent again only in that race, when the server read nothing of it.
 */
public final class PlainHttp implements AutoCloseable {
    /** A response: the status code and the body, decoded from chunks if it was chunked. */
    public record Response(int status, byte[] body) { }

    private final URI uri;
    private final byte[] head;
    private final int timeoutMs;
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private boolean reused;

    /**
     * {@code uri}: the POST target (http only); {@code headers}: extra header lines ({@code "Name: value"}), sent
     * with every request after {@code Host}, {@code Content-Type} and before {@code Content-Length}.
     */
    public PlainHttp(URI uri, String contentType, int timeoutMs, String... headers) {
        if (!"http".equalsIgnoreCase(uri.getScheme())) throw new IllegalArgumentException("http only: " + uri);
        this.uri = uri;
        this.timeoutMs = timeoutMs;
        StringBuilder h = new StringBuilder();
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (uri.getRawQuery() != null) path += "?" + uri.getRawQuery();
        h.append("POST ").append(path).append(" HTTP/1.1\r\n");
        h.append("Host: ").append(uri.getHost()).append(':').append(port(uri)).append("\r\n");
        h.append("Content-Type: ").append(contentType).append("\r\n");
        for (String line : headers) {
            if (line != null) h.append(line).append("\r\n");
        }
        h.append("Content-Length: ");
        this.head = h.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    public Response post(byte[] body) throws IOException {
        boolean retried = false;
        while (true) {
            boolean wasReused = connect();
            try {
                out.write(head);
                out.write(Integer.toString(body.length).getBytes(StandardCharsets.ISO_8859_1));
                out.write(CRLF_CRLF);
                out.write(body);
                out.flush();
                int first = in.read();
                if (first < 0) throw new StaleConnection();
                Response r = readResponse(first);
                reused = true;
                return r;
            } catch (StaleConnection e) {
                close();
                // the server closed a kept-alive connection before it read this request: nothing of it was handled
                if (!wasReused || retried) throw new EOFException("the server closed the connection without answering");
                retried = true;
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }
    }

    private static final byte[] CRLF_CRLF = {'\r', '\n', '\r', '\n'};

    private boolean connect() throws IOException {
        if (socket != null) return reused;
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.setSoTimeout(timeoutMs);
        s.connect(new InetSocketAddress(uri.getHost(), port(uri)), timeoutMs);
        socket = s;
        in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
        out = new BufferedOutputStream(s.getOutputStream(), 16 * 1024);
        reused = false;
        return false;
    }

    private Response readResponse(int first) throws IOException {
        String status = line(first);
        // "HTTP/1.1 200 OK"
        int sp = status.indexOf(' ');
        if (!status.startsWith("HTTP/1.") || sp < 0 || status.length() < sp + 4) {
            throw new IOException("not an HTTP/1.x status line: " + status);
        }
        int code = Integer.parseInt(status.substring(sp + 1, sp + 4));
        long length = -1;
        boolean chunked = false;
        boolean closes = status.startsWith("HTTP/1.0");
        for (String h = line(in.read()); !h.isEmpty(); h = line(in.read())) {
            int colon = h.indexOf(':');
            if (colon <= 0) continue;
            String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = h.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> closes = value.equalsIgnoreCase("close");
                default -> { }
            }
        }
        byte[] body;
        if (chunked) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            while (true) {
                String size = line(in.read());
                int semi = size.indexOf(';');
                int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                if (n == 0) {
                    while (!line(in.read()).isEmpty()) { } // trailers
                    break;
                }
                b.write(in.readNBytes(n));
                line(in.read());
            }
            body = b.toByteArray();
        } else if (length >= 0) {
            body = in.readNBytes((int) length);
            if (body.length != length) throw new EOFException("the response body ended early");
        } else {
            body = in.readAllBytes();
            closes = true;
        }
        if (closes) close();
        return new Response(code, body);
    }

    /** A header line without its CRLF; {@code first} is its first byte, already read. */
    private String line(int first) throws IOException {
        StringBuilder sb = new StringBuilder(64);
        int c = first;
        while (true) {
            if (c < 0) throw new EOFException("the response ended inside its head");
            if (c == '\n') break;
            if (c != '\r') sb.append((char) c);
            c = in.read();
        }
        return sb.toString();
    }

    private static int port(URI uri) {
        return uri.getPort() > 0 ? uri.getPort() : 80;
    }

    @Override
    public void close() {
        Socket s = socket;
        socket = null;
        in = null;
        out = null;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
    }

    /** An end of stream where a response should have begun. */
    private static final class StaleConnection extends IOException {
        private static final long serialVersionUID = 1L;
    }
}

package syncular.jakarta.sync.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy that counts database round trips (a benchmark tool, NOT a test): placed between a server and
 * PostgreSQL, it forwards bytes both ways for any number of concurrent connections and counts, per connection, each
 * time the traffic turns from client→server to server→client — one round trip, whatever the bytes are (a pipelined
 * batch the driver sends in one go is one). The total is what {@link SyncLoadDriver} {@code --roundtrip-counter}
 * reads before and after a window.
 *
 * <pre>java -cp … syncular.jakarta.sync.bench.PgRoundTripProxy --listen=55433 --target=127.0.0.1:55432 --control=55434</pre>
 *
 * Both ports bind to 127.0.0.1. The control port answers any HTTP request ({@code curl -s http://127.0.0.1:55434/})
 * with {@code text/plain} lines {@code roundtrips N}, {@code connections N} (accepted so far), {@code open N},
 * {@code bytes_up N} (client→server) and {@code bytes_down N}. Prints {@code PROXY_READY …} once listening; runs until
 * killed. One thread per direction per connection.
 */
public final class PgRoundTripProxy {
    private static final int UP = 1;
    private static final int DOWN = 2;

    private static final AtomicLong ROUND_TRIPS = new AtomicLong();
    private static final AtomicLong CONNECTIONS = new AtomicLong();
    private static final AtomicLong OPEN = new AtomicLong();
    private static final AtomicLong BYTES_UP = new AtomicLong();
    private static final AtomicLong BYTES_DOWN = new AtomicLong();

    private PgRoundTripProxy() { }

    public static void main(String[] args) throws IOException {
        Map<String, String> o = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) throw new IllegalArgumentException("expected --key=value, got " + a);
            o.put(a.substring(2, eq), a.substring(eq + 1));
        }
        int listen = Integer.parseInt(required(o, "listen"));
        String target = required(o, "target");
        int control = Integer.parseInt(required(o, "control"));
        int colon = target.lastIndexOf(':');
        InetSocketAddress to = new InetSocketAddress(target.substring(0, colon),
                Integer.parseInt(target.substring(colon + 1)));
        InetAddress loopback = InetAddress.getByName("127.0.0.1");

        ServerSocket controlSocket = new ServerSocket(control, 50, loopback);
        Thread c = new Thread(() -> serveControl(controlSocket), "proxy-control");
        c.setDaemon(true);
        c.start();

        try (ServerSocket server = new ServerSocket(listen, 512, loopback)) {
            System.out.println("PROXY_READY listen=127.0.0.1:" + listen + " target=" + to + " control=127.0.0.1:" + control);
            System.out.flush();
            while (true) {
                Socket client = server.accept();
                long id = CONNECTIONS.incrementAndGet();
                Thread t = new Thread(() -> connection(client, to), "proxy-conn-" + id);
                t.setDaemon(true);
                t.start();
            }
        }
    }

    private static String required(Map<String, String> o, String key) {
        String v = o.get(key);
        if (v == null || v.isBlank()) throw new IllegalArgumentException("--" + key + "= is required");
        return v;
    }

    /** One proxied connection: this thread pumps server→client, a second one client→server. */
    private static void connection(Socket client, InetSocketAddress to) {
        Socket server = new Socket();
        OPEN.incrementAndGet();
        // the direction of the last bytes seen on this connection; a DOWN after an UP is one round trip
        AtomicInteger last = new AtomicInteger();
        try {
            client.setTcpNoDelay(true);
            server.setTcpNoDelay(true);
            server.connect(to, 10_000);
            Thread up = new Thread(() -> pump(client, server, last, true), Thread.currentThread().getName() + "-up");
            up.setDaemon(true);
            up.start();
            pump(server, client, last, false);
            up.join();
        } catch (IOException e) {
            System.err.println("proxy: cannot reach " + to + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(client);
            closeQuietly(server);
            OPEN.decrementAndGet();
        }
    }

    private static void pump(Socket from, Socket to, AtomicInteger last, boolean upward) {
        byte[] buf = new byte[64 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (n == 0) continue;
                if (upward) {
                    // marked before forwarding, so the answer to these bytes cannot be seen first
                    last.set(UP);
                    BYTES_UP.addAndGet(n);
                } else {
                    if (last.getAndSet(DOWN) == UP) ROUND_TRIPS.incrementAndGet();
                    BYTES_DOWN.addAndGet(n);
                }
                out.write(buf, 0, n);
                out.flush();
            }
            to.shutdownOutput(); // pass the half-close on; the other direction may still be talking
        } catch (IOException e) {
            // one side is gone: end both directions
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void serveControl(ServerSocket control) {
        while (true) {
            try (Socket s = control.accept()) {
                s.setSoTimeout(2000);
                drainRequestHead(s.getInputStream());
                String body = "roundtrips " + ROUND_TRIPS.get() + "\nconnections " + CONNECTIONS.get() + "\nopen "
                        + OPEN.get() + "\nbytes_up " + BYTES_UP.get() + "\nbytes_down " + BYTES_DOWN.get() + "\n";
                byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + bytes.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                if (control.isClosed()) return;
            }
        }
    }

    /** Reads up to the blank line that ends an HTTP request head (or 8 KiB, or 2 s of silence). */
    private static void drainRequestHead(InputStream in) throws IOException {
        int tail = 0; // the last four bytes read
        for (int i = 0; i < 8192; i++) {
            int b;
            try {
                b = in.read();
            } catch (SocketTimeoutException e) {
                return;
            }
            if (b < 0) return;
            tail = (tail << 8) | b;
            if (tail == 0x0d0a0d0a || (tail & 0xffff) == 0x0a0a) return; // CRLF CRLF, or a bare LF LF
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}

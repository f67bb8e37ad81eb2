package syncular.jakarta.realtime.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import syncular.jakarta.sync.bench.PlainWebSocket;

/**
 * Reads many detached client WebSockets ({@link PlainWebSocket#detach}) on one thread through a selector: whole
 * messages (fragments joined) go to each connection's {@link Sink} with the time their last bytes were read; pings
 * are answered, a close frame ends the connection. A thread per socket costs the driver a wake-up and a read for
 * every message (about 36 µs a delta at 1,000 sockets, docs/benchmarks.md), CPU it takes from the two cores the
 * server under test shares; one selector reads every socket that is ready in one pass. Server frames are not masked.
 */
final class SelectorReader implements Runnable {
    /** What a connection's messages go to. */
    interface Sink {
        void message(boolean text, byte[] payload, long nanos);
    }

    private final Selector selector;
    private final Queue<Connection> joining = new ConcurrentLinkedQueue<>();
    private final Queue<Connection> all = new ConcurrentLinkedQueue<>();

    SelectorReader() throws IOException { this.selector = Selector.open(); }

    /** Starts reading {@code detached}, its buffered bytes first. */
    void add(PlainWebSocket.Detached detached, Sink sink) {
        Connection c = new Connection(detached, sink);
        all.add(c);
        joining.add(c);
        selector.wakeup();
    }

    /** A close frame (1000) to every connection, then each closed without waiting for the server's answer. */
    void closeAll() {
        for (Connection c : all) {
            SocketChannel channel = c.channel;
            try {
                ByteBuffer close = ByteBuffer.wrap(PlainWebSocket.frame(0x8, new byte[] {0x03, (byte) 0xE8}));
                for (int i = 0; i < 100 && close.hasRemaining(); i++) channel.write(close);
            } catch (IOException ignored) {
                // the connection is already gone
            }
            c.close();
        }
    }

    @Override
    public void run() {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                // each ready socket handed over as it is found, without the selected-key set's add, walk and clear
                selector.select(key -> ((Connection) key.attachment()).readable(System.nanoTime()));
                long now = System.nanoTime();
                for (Connection c; (c = joining.poll()) != null; ) c.join(now);
            }
        } catch (IOException e) {
            throw new IllegalStateException("the driver's selector failed", e);
        }
    }

    private final class Connection {
        final SocketChannel channel;
        final Sink sink;
        /** Direct, so a read lands in it without the copy through a temporary direct buffer a heap one costs. */
        ByteBuffer buffer = ByteBuffer.allocateDirect(16 * 1024);
        ByteArrayOutputStream fragments;
        boolean fragmentsText;

        Connection(PlainWebSocket.Detached detached, Sink sink) {
            this.channel = detached.channel();
            this.sink = sink;
            buffer.put(detached.buffered());
        }

        void join(long now) {
            try {
                channel.configureBlocking(false);
                channel.register(selector, SelectionKey.OP_READ, this);
                parse(now);   // what was buffered before the handover
            } catch (IOException e) {
                close();
            }
        }

        void readable(long now) {
            try {
                if (!buffer.hasRemaining()) buffer = grow(buffer);
                if (channel.read(buffer) < 0) {
                    close();
                    return;
                }
                parse(now);
            } catch (IOException e) {
                close();
            }
        }

        /** Every whole frame in the buffer; a partial one stays for the next read. */
        private void parse(long now) throws IOException {
            buffer.flip();
            while (buffer.remaining() >= 2) {
                int start = buffer.position();
                int b0 = buffer.get(start) & 0xff;
                int b1 = buffer.get(start + 1) & 0xff;
                int header = 2;
                long length = b1 & 0x7f;
                if (length == 126) {
                    if (buffer.remaining() < 4) break;
                    length = ((buffer.get(start + 2) & 0xffL) << 8) | (buffer.get(start + 3) & 0xffL);
                    header = 4;
                } else if (length == 127) {
                    if (buffer.remaining() < 10) break;
                    length = buffer.getLong(start + 2);
                    header = 10;
                }
                if ((b1 & 0x80) != 0) throw new IOException("a masked frame from the server");
                if (length > 64L << 20) throw new IOException("a frame of " + length + " bytes");
                if (buffer.remaining() < header + length) {
                    if (header + length > buffer.capacity()) {
                        buffer.compact();
                        buffer = grow(buffer, (int) (header + length));
                        buffer.flip();
                    }
                    break;
                }
                byte[] payload = new byte[(int) length];
                buffer.position(start + header);
                buffer.get(payload);
                frame(b0 & 0x80, b0 & 0x0f, payload, now);
            }
            buffer.compact();
        }

        private void frame(int fin, int opcode, byte[] payload, long now) throws IOException {
            switch (opcode) {
                case 0x8 -> close();
                case 0x9 -> {
                    ByteBuffer pong = ByteBuffer.wrap(PlainWebSocket.frame(0xA, payload));
                    while (pong.hasRemaining()) channel.write(pong);   // a few bytes: the send buffer takes them
                }
                case 0xA -> { }
                default -> {
                    if (opcode != 0) fragmentsText = opcode == 0x1;
                    if (fin != 0 && fragments == null) {
                        sink.message(fragmentsText, payload, now);
                        return;
                    }
                    if (fragments == null) fragments = new ByteArrayOutputStream();
                    fragments.writeBytes(payload);
                    if (fin != 0) {
                        byte[] whole = fragments.toByteArray();
                        fragments = null;
                        sink.message(fragmentsText, whole, now);
                    }
                }
            }
        }

        private void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing left to release
            }
        }
    }

    private static ByteBuffer grow(ByteBuffer full) { return grow(full, full.capacity() * 2); }

    /** A buffer of at least {@code capacity} holding what {@code b} holds (in write mode, as {@code b} is). */
    private static ByteBuffer grow(ByteBuffer b, int capacity) {
        ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(capacity, b.capacity() * 2));
        b.flip();
        bigger.put(b);
        return bigger;
    }
}

package syncular.jakarta.realtime;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The send queue of one socket (STYLE §6.10): at most one asynchronous send in flight, the next started from the
 * completion of the previous, so publishing never waits on a socket. Memory is bounded per kind:
 * <ul>
 *   <li>deltas (§8.2) count against {@code outboxMaxBytes}; one that does not fit is refused and the caller sends a
 *       {@code catchup-required} wake instead (the client pulls what it missed);</li>
 *   <li>a wake-up (§8.3) is coalescible: a newer one replaces a queued, unsent one;</li>
 *   <li>other control messages count against {@code outboxMaxMessages}; past it the socket is closed as a slow
 *       consumer (1013 TRY_AGAIN_LATER);</li>
 *   <li>round chunks (§8.7): one round is in flight at a time and its response is capped by
 *       {@code max-response-bytes}, so a response is always taken when nothing of an earlier one is still queued;
 *       behind an undrained earlier response it must fit in {@code outboxMaxBytes} with it, else the round is
 *       refused and the caller closes the socket (a client that sends rounds but never reads would otherwise grow
 *       the heap by one response per round);</li>
 *   <li>a WebSocket ping goes out only when nothing else is queued or in flight: a socket that does not drain
 *       needs no ping to be found out (its pongs stop, and the idle timeout closes it).</li>
 * </ul>
 * Thread-safe.
 */
final class Outbox {
    static final int TRY_AGAIN_LATER = 1013;

    private enum Kind { DELTA, WAKE, CONTROL, ROUND, PING }

    private static final class Item {
        final Kind kind;
        Object payload;
        final long bytes;

        Item(Kind kind, Object payload, long bytes) {
            this.kind = kind;
            this.payload = payload;
            this.bytes = bytes;
        }
    }

    private final SocketChannel channel;
    private final long maxDeltaBytesQueued;
    private final int maxControlQueued;
    private final ArrayDeque<Item> queue = new ArrayDeque<>();
    private long deltaBytes;
    private long roundBytes;
    private int controls;
    private boolean sending;
    private boolean closed;

    private final long maxRoundBytesQueued;

    Outbox(SocketChannel channel, long maxDeltaBytesQueued, int maxControlQueued) {
        this.channel = channel;
        this.maxRoundBytesQueued = maxDeltaBytesQueued;
        this.maxDeltaBytesQueued = maxDeltaBytesQueued;
        this.maxControlQueued = maxControlQueued;
    }

    /** Queues a delta unless it would pass the byte bound; false = refused (send a catch-up wake instead). */
    boolean offerDelta(ByteBuffer delta) {
        synchronized (this) {
            if (closed) return true;
            long n = delta.remaining();
            if (deltaBytes + n > maxDeltaBytesQueued) return false;
            deltaBytes += n;
            queue.add(new Item(Kind.DELTA, delta, n));
        }
        pump();
        return true;
    }

    /** Queues a wake-up, replacing a queued unsent one (§8.3: coalescible). */
    void offerWake(String json) {
        synchronized (this) {
            if (closed) return;
            for (Iterator<Item> it = queue.iterator(); it.hasNext(); ) {
                Item i = it.next();
                if (i.kind == Kind.WAKE) {
                    i.payload = json;
                    return;
                }
            }
            queue.add(new Item(Kind.WAKE, json, 0));
        }
        pump();
    }

    /** Queues a control message; a socket that lets {@code maxControlQueued} pile up is closed. */
    void offerText(String json) {
        boolean slow;
        synchronized (this) {
            if (closed) return;
            slow = controls >= maxControlQueued;
            if (!slow) {
                controls++;
                queue.add(new Item(Kind.CONTROL, json, 0));
            }
        }
        if (slow) {
            close();
            channel.close(TRY_AGAIN_LATER, "slow consumer");
            return;
        }
        pump();
    }

    /**
     * Whether a round response of {@code bytes} may be queued now: always when no earlier response is still queued,
     * else only if both fit in the byte bound. False = the client is not reading; close it.
     */
    synchronized boolean admitsRound(long bytes) {
        return closed || roundBytes == 0 || roundBytes + bytes <= maxRoundBytesQueued;
    }

    /** Queues a chunk of the round's response (admitted beforehand, see {@link #admitsRound}). */
    void offerRound(ByteBuffer chunk) {
        synchronized (this) {
            if (closed) return;
            long n = chunk.remaining();
            roundBytes += n;
            queue.add(new Item(Kind.ROUND, chunk, n));
        }
        pump();
    }

    /** Sends a WebSocket ping if the socket is otherwise idle (see the class comment). */
    void offerPing() {
        synchronized (this) {
            if (closed || sending || !queue.isEmpty()) return;
            queue.add(new Item(Kind.PING, null, 0));
        }
        pump();
    }

    synchronized long queuedDeltaBytes() { return deltaBytes; }

    synchronized int queued() { return queue.size() + (sending ? 1 : 0); }

    /** Drops everything queued; later offers are ignored. */
    void close() {
        synchronized (this) {
            closed = true;
            queue.clear();
            deltaBytes = 0;
            roundBytes = 0;
            controls = 0;
        }
    }

    private void pump() {
        Item next;
        synchronized (this) {
            if (sending || closed || queue.isEmpty()) return;
            next = queue.poll();
            sending = true;
        }
        Item sent = next;
        try {
            if (sent.kind == Kind.PING) {
                channel.sendPing(failure -> completed(sent, failure));
            } else if (sent.payload instanceof String text) {
                channel.sendText(text, failure -> completed(sent, failure));
            } else {
                channel.sendBinary((ByteBuffer) sent.payload, failure -> completed(sent, failure));
            }
        } catch (RuntimeException e) {
            completed(sent, e);
        }
    }

    private void completed(Item item, Throwable failure) {
        synchronized (this) {
            sending = false;
            if (item.kind == Kind.DELTA) deltaBytes -= item.bytes;
            if (item.kind == Kind.ROUND) roundBytes -= item.bytes;
            if (item.kind == Kind.CONTROL) controls--;
            if (failure != null) {
                // the socket is going away; its close handler unregisters the session
                closed = true;
                queue.clear();
                return;
            }
        }
        pump();
    }
}

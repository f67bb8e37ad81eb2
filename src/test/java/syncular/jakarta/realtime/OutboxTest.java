package syncular.jakarta.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The per-socket send queue (STYLE §6.10): one send in flight, bounded memory, coalesced wakes, slow consumers. */
class OutboxTest {
    /** A socket whose sends complete only when the test says so. */
    static final class ManualChannel implements SocketChannel {
        final List<Object> sent = new ArrayList<>();
        final List<Consumer<Throwable>> pending = new ArrayList<>();
        int inFlight;
        int maxInFlight;
        String closedWith;

        @Override
        public synchronized void sendText(String text, Consumer<Throwable> done) { start(text, done); }

        @Override
        public synchronized void sendBinary(ByteBuffer data, Consumer<Throwable> done) { start(data, done); }

        private void start(Object what, Consumer<Throwable> done) {
            sent.add(what);
            inFlight++;
            maxInFlight = Math.max(maxInFlight, inFlight);
            pending.add(done);
        }

        void completeOne(Throwable failure) {
            Consumer<Throwable> done;
            synchronized (this) {
                done = pending.remove(0);
                inFlight--;
            }
            done.accept(failure);
        }

        @Override
        public void close(int code, String reason) { closedWith = code + " " + reason; }
    }

    private static ByteBuffer bytes(int n) { return ByteBuffer.allocate(n); }

    @Test
    void keepsOneSendInFlightAndStartsTheNextFromTheCompletion() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 1_000, 10);
        box.offerText("a");
        box.offerText("b");
        assertTrue(box.offerDelta(bytes(10)));
        assertEquals(1, ch.sent.size());
        ch.completeOne(null);
        assertEquals(2, ch.sent.size());
        ch.completeOne(null);
        ch.completeOne(null);
        assertEquals(List.of("a", "b"), ch.sent.subList(0, 2));
        assertEquals(3, ch.sent.size());
        assertEquals(1, ch.maxInFlight);
        assertEquals(0, box.queuedDeltaBytes());
    }

    @Test
    void refusesADeltaBeyondTheByteBoundSoTheCallerSendsAWakeInstead() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 100, 10);
        assertTrue(box.offerDelta(bytes(60)));   // in flight, still counted until it completes
        assertTrue(box.offerDelta(bytes(40)));
        assertFalse(box.offerDelta(bytes(1)), "a stuck socket's queue must not grow past the bound");
        ch.completeOne(null);
        assertTrue(box.offerDelta(bytes(50)), "room again once the socket drained");
    }

    @Test
    void aNewerWakeReplacesAQueuedUnsentOne() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 100, 10);
        box.offerText("first");   // in flight
        box.offerWake("wake-1");
        box.offerWake("wake-2");
        ch.completeOne(null);
        ch.completeOne(null);
        assertEquals(List.of("first", "wake-2"), ch.sent);
    }

    @Test
    void aSocketThatLetsControlMessagesPileUpIsClosedAsASlowConsumer() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 100, 3);
        box.offerText("1");   // in flight, still counted
        box.offerText("2");
        box.offerText("3");
        assertEquals(null, ch.closedWith);
        box.offerText("4");
        assertEquals("1013 slow consumer", ch.closedWith);
        box.offerText("5");
        ch.completeOne(null);
        assertEquals(List.of("1"), ch.sent, "nothing more is sent after the close");
    }

    @Test
    void aFailedSendDropsTheQueue() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 100, 10);
        box.offerText("1");
        box.offerText("2");
        ch.completeOne(new java.io.IOException("reset"));
        assertEquals(1, ch.sent.size());
        assertEquals(0, box.queued());
    }

    @Test
    void roundChunksAreNeverRefused() {
        ManualChannel ch = new ManualChannel();
        Outbox box = new Outbox(ch, 10, 1);
        for (int i = 0; i < 5; i++) box.offerRound(bytes(100));
        for (int i = 0; i < 5; i++) ch.completeOne(null);
        assertEquals(5, ch.sent.size());
    }
}

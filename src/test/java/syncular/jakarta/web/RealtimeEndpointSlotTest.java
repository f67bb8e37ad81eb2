package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The slot between a WebSocket and its realtime session: a client may answer the hello before the endpoint's open()
 * has returned, and the container may deliver that message on another thread meanwhile — it must be processed once
 * the session attaches, in order, never dropped (the conformance scenario ws-round/pipelined-round-drops-connection
 * lost its first request that way under load).
 */
class RealtimeEndpointSlotTest {
    record Session(List<String> received, AtomicBoolean closed, java.util.concurrent.atomic.AtomicInteger code) {
        Session() { this(new ArrayList<>(), new AtomicBoolean(), new java.util.concurrent.atomic.AtomicInteger()); }

        void close(int closeCode) {
            code.set(closeCode);
            closed.set(true);
        }
    }

    @Test
    void messagesBeforeTheSessionAttachesAreDeliveredInOrderThenLiveOnes() throws Exception {
        AtomicBoolean overflowed = new AtomicBoolean();
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> overflowed.set(true),
                Session::close);
        CountDownLatch sent = new CountDownLatch(1);
        Thread early = new Thread(() -> {   // the container's message thread, racing open()
            slot.dispatch(s -> s.received().add("round-1"));
            slot.dispatch(s -> s.received().add("round-2"));
            sent.countDown();
        });
        early.start();
        assertTrue(sent.await(5, TimeUnit.SECONDS));
        Session session = new Session();
        slot.attach(session);
        slot.dispatch(s -> s.received().add("ack"));
        assertEquals(List.of("round-1", "round-2", "ack"), session.received());
        assertEquals(false, overflowed.get());
    }

    @Test
    void aSocketClosedBeforeTheSessionAttachedClosesTheSessionAndDropsNothingLater() {
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> { }, Session::close);
        slot.dispatch(s -> s.received().add("early"));
        slot.closed(1001);
        Session session = new Session();
        slot.attach(session);
        assertTrue(session.closed().get(), "the session unregisters: its socket is gone");
        assertEquals(1001, session.code().get(), "with the code the socket closed with");
        assertEquals(List.of(), session.received());
    }

    @Test
    void tooManyMessagesBeforeTheHelloCloseTheSocket() {
        AtomicBoolean overflowed = new AtomicBoolean();
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> overflowed.set(true), (s, code) -> { });
        for (int i = 0; i < RealtimeEndpoint.Slot.EARLY_MESSAGES; i++) slot.dispatch(s -> { });
        assertEquals(false, overflowed.get());
        slot.dispatch(s -> { });
        assertTrue(overflowed.get());
    }
}

package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.websocket.CloseReason;
import jakarta.websocket.RemoteEndpoint;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
                Session::close, Runnable::run);
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
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> { }, Session::close, Runnable::run);
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
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> overflowed.set(true), (s, code) -> { },
                Runnable::run);
        for (int i = 0; i < RealtimeEndpoint.Slot.EARLY_MESSAGES; i++) slot.dispatch(s -> { });
        assertEquals(false, overflowed.get());
        slot.dispatch(s -> { });
        assertTrue(overflowed.get());
    }
    /**
     * Grizzly reports a close from inside the send that found the connection gone, on the sending thread, which may
     * hold the session's or the presence lock that unregistering takes in the other order (a node's realtime
     * deadlocked so under a reconnect storm): such a close is handled later, on another thread; any other close at
     * once.
     */
    @Test
    void aCloseReportedFromInsideOurOwnSendIsHandledLaterElsewhere() {
        List<Runnable> later = new ArrayList<>();
        RealtimeEndpoint.Slot<Session> slot = new RealtimeEndpoint.Slot<>(() -> { }, Session::close, later::add);
        Session session = new Session();
        slot.attach(session);
        RealtimeEndpoint endpoint = new RealtimeEndpoint();
        Map<String, Object> properties = new HashMap<>();
        jakarta.websocket.Session[] socket = new jakarta.websocket.Session[1];
        // the container's async remote: a send that finds the connection gone closes it on the caller's thread
        RemoteEndpoint.Async remote = proxy(RemoteEndpoint.Async.class, (m, args) -> {
            if (m.getName().equals("sendText")) {
                endpoint.closed(socket[0], new CloseReason(CloseReason.CloseCodes.CLOSED_ABNORMALLY, "reset"));
                assertFalse(session.closed().get(), "not on the sending thread");
            }
            return null;
        });
        socket[0] = proxy(jakarta.websocket.Session.class, (m, args) -> switch (m.getName()) {
            case "getUserProperties" -> properties;
            case "getAsyncRemote" -> remote;
            default -> null;
        });
        properties.put("syncular.realtime.session", slot);

        new RealtimeEndpoint.Channel(socket[0]).sendText("{}", failure -> { });
        assertEquals(1, later.size(), "handed to another thread");
        later.get(0).run();
        assertTrue(session.closed().get());
        assertEquals(CloseReason.CloseCodes.CLOSED_ABNORMALLY.getCode(), session.code().get());

        Session other = new Session();
        RealtimeEndpoint.Slot<Session> otherSlot = new RealtimeEndpoint.Slot<>(() -> { }, Session::close, later::add);
        otherSlot.attach(other);
        properties.put("syncular.realtime.session", otherSlot);
        endpoint.closed(socket[0], new CloseReason(CloseReason.CloseCodes.NORMAL_CLOSURE, "bye"));
        assertTrue(other.closed().get(), "a close the container reports on its own thread is handled at once");
        assertEquals(1, later.size());
    }

    private interface Handler {
        Object invoke(java.lang.reflect.Method m, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Handler handler) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, m, args) -> handler.invoke(m, args)));
    }
}

package syncular.jakarta.web;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import syncular.jakarta.events.EventBus;
import syncular.jakarta.events.EventRing;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.wire.Json;

/**
 * One live tail of the node's events over SSE: the retained events after the client's {@code Last-Event-ID}
 * first, then each new one, each with its sequence number as the SSE id. The bus hands events to a bounded queue
 * and never waits; this tail's own thread sends them. A tail that cannot keep up loses events (and is told how
 * many, as a {@code dropped} event), never slows a push. Ends when the client goes away.
 */
final class EventTail {
    /** Events queued for one tail before it starts dropping. */
    static final int QUEUE = 1024;
    /** A comment line this often keeps proxies from closing an idle tail and notices a client that left. */
    static final long KEEPALIVE_MS = 15_000;

    private final EventBus bus;
    private final Predicate<ServerEvent> filter;
    private final SseEventSink sink;
    private final Sse sse;
    private final Runnable ended;
    private final BlockingQueue<EventRing.Sequenced> queue = new ArrayBlockingQueue<>(QUEUE);
    private final java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();

    EventTail(EventBus bus, Predicate<ServerEvent> filter, SseEventSink sink, Sse sse, Runnable ended) {
        this.bus = bus;
        this.filter = filter;
        this.sink = sink;
        this.sse = sse;
        this.ended = ended;
    }

    /** Runs on the tail's own thread until the client leaves. {@code after} −1: live events only. */
    void run(long after) {
        Runnable unlisten = bus.listen(s -> {
            if (filter.test(s.event()) && !queue.offer(s)) dropped.incrementAndGet();
        });
        try {
            long sent = after;
            if (after >= 0) {
                for (EventRing.Sequenced s : bus.ring().after(after, bus.ring().capacity(), filter)) {
                    if (!send(s)) return;
                    sent = s.seq();
                }
            }
            while (!sink.isClosed()) {
                EventRing.Sequenced s = queue.poll(KEEPALIVE_MS, TimeUnit.MILLISECONDS);
                long lost = dropped.getAndSet(0);
                if (lost > 0) {
                    if (!deliver(sse.newEventBuilder().name("dropped").data(Json.write(java.util.Map.of("events",
                            lost))).build())) return;
                }
                if (s == null) {
                    if (!deliver(sse.newEventBuilder().comment("keepalive").build())) return;
                } else if (s.seq() > sent) {   // already replayed from the ring
                    if (!send(s)) return;
                    sent = s.seq();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            unlisten.run();
            try {
                sink.close();
            } catch (RuntimeException ignored) {
                // the client already left
            }
            ended.run();
        }
    }

    private boolean send(EventRing.Sequenced s) {
        return deliver(sse.newEventBuilder().id(Long.toString(s.seq())).name(s.event().type())
                .mediaType(MediaType.APPLICATION_JSON_TYPE).data(String.class, Json.write(EventsResource.json(s)))
                .build());
    }

    /** Sends one event and waits for it to be written: false once the client is gone. */
    private boolean deliver(OutboundSseEvent event) {
        if (sink.isClosed()) return false;
        try {
            sink.send(event).toCompletableFuture().get(KEEPALIVE_MS * 2, TimeUnit.MILLISECONDS);
            return true;
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            return false;
        }
    }
}

package syncular.jakarta.web;

import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import syncular.jakarta.events.EventRing;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The node's events for operators (issue 20): {@code GET admin/events} answers the retained ring (filtered, after a
 * sequence number), {@code GET admin/events/stream} is the live tail over Server-Sent Events, resumable with
 * {@code Last-Event-ID}. Filters: {@code type} (a name or a prefix ending in {@code .}, e.g. {@code push.}),
 * {@code partition}, {@code clientId}. Behind the web.xml constraint on {@code /admin/*} (401/403) and, as a
 * second line, the role checked here.
 */
@ApplicationScoped
@Path("admin/events")
public class EventsResource {
    /** Live tails one node serves at once; more are refused 503 (each holds a sender thread). */
    static final int MAX_TAILS = 16;

    @Inject
    Telemetry telemetry;
    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    ManagedThreadFactory threads;

    private final AtomicInteger tails = new AtomicInteger();

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response recent(@QueryParam("after") Long after, @QueryParam("limit") Integer limit,
                           @QueryParam("type") String type, @QueryParam("partition") String partition,
                           @QueryParam("clientId") String clientId, @Context SecurityContext security) {
        AdminGuard.require(security);
        int n = limit == null ? 200 : limit;
        if (n < 1 || n > telemetry.events().ring().capacity()) {
            return ErrorBodies.of(400, ErrorCode.SYNC_INVALID_REQUEST,
                    "limit must be 1.." + telemetry.events().ring().capacity(), null);
        }
        EventRing ring = telemetry.events().ring();
        List<Map<String, Object>> out = new ArrayList<>();
        for (EventRing.Sequenced s : ring.after(after == null ? 0 : after, n, filter(type, partition, clientId))) {
            out.add(json(s));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("events", out);
        body.put("nextSeq", ring.nextSeq());
        body.put("capacity", ring.capacity());
        return Response.ok(Json.write(body), MediaType.APPLICATION_JSON).header("Cache-Control", "no-store").build();
    }

    @GET
    @Path("stream")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    public void stream(@HeaderParam("Last-Event-ID") String lastEventId, @QueryParam("type") String type,
                       @QueryParam("partition") String partition, @QueryParam("clientId") String clientId,
                       @Context SecurityContext security, @Context SseEventSink sink, @Context Sse sse) {
        AdminGuard.require(security);
        long after = resumeAfter(lastEventId);
        if (tails.incrementAndGet() > MAX_TAILS) {
            tails.decrementAndGet();
            sink.send(sse.newEventBuilder().name("error").data(Json.write(Map.of("code",
                    ErrorCode.SYNC_INTERNAL_ERROR.wire(), "message", MAX_TAILS + " live tails are open on this node"))).build());
            sink.close();
            return;
        }
        EventTail tail = new EventTail(telemetry.events(), filter(type, partition, clientId), sink, sse,
                tails::decrementAndGet);
        threads.newThread(() -> tail.run(after)).start();
    }

    /**
     * The sequence number a tail resumes after: the client's {@code Last-Event-ID}, or −1 (live events only) without
     * one. A value that is not a number is none this stream sent (its ids are sequence numbers), so it is refused
     * here, before a byte of the stream, as 400 {@code sync.invalid_request} like the ring's bad {@code limit}.
     * Closing the stream instead looked to the client like an empty stream, which an EventSource reconnects to; a
     * status other than 200 says what is wrong and, by the SSE rules, stops the reconnecting.
     */
    static long resumeAfter(String lastEventId) {
        if (lastEventId == null || lastEventId.isBlank()) return -1;
        try {
            return Long.parseLong(lastEventId.trim());
        } catch (NumberFormatException e) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                    "Last-Event-ID must be the sequence number of an event this stream sent");
        }
    }

    static Map<String, Object> json(EventRing.Sequenced s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", s.seq());
        m.putAll(s.event().fields());
        return m;
    }

    static Predicate<ServerEvent> filter(String type, String partition, String clientId) {
        Predicate<ServerEvent> p = e -> true;
        if (type != null && !type.isBlank()) {
            String t = type.trim();
            p = p.and(t.endsWith(".") ? e -> e.type().startsWith(t) : e -> e.type().equals(t));
        }
        if (partition != null && !partition.isBlank()) p = p.and(e -> partition.equals(e.partition()));
        if (clientId != null && !clientId.isBlank()) p = p.and(e -> clientId.equals(e.clientId()));
        return p;
    }
}

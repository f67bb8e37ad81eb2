package syncular.jakarta.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventRingTest {
    private static ServerEvent push(long seq, String partition) {
        return new ServerEvent.PushApplied(seq, partition, "actor", "client", "c" + seq, seq, 1, false);
    }

    @Test
    void keepsTheNewestEventsInOrderAndResumesAfterASequenceNumber() {
        EventRing ring = new EventRing(4);
        for (int i = 1; i <= 6; i++) ring.append(push(i, "p"));
        assertEquals(7, ring.nextSeq());
        // 1 and 2 were overwritten
        assertEquals(List.of(3L, 4L, 5L, 6L), ring.after(0, 10, e -> true).stream().map(EventRing.Sequenced::seq).toList());
        assertEquals(List.of(5L, 6L), ring.after(4, 10, e -> true).stream().map(EventRing.Sequenced::seq).toList());
        assertEquals(List.of(), ring.after(6, 10, e -> true));
    }

    @Test
    void aLimitAnswersTheNewestMatchesOldestFirst() {
        EventRing ring = new EventRing(16);
        for (int i = 1; i <= 10; i++) ring.append(push(i, i % 2 == 0 ? "even" : "odd"));
        List<EventRing.Sequenced> last = ring.after(0, 3, e -> e.partition().equals("even"));
        assertEquals(List.of(6L, 8L, 10L), last.stream().map(EventRing.Sequenced::seq).toList());
    }

    @Test
    void aRingHoldsAtLeastOneEvent() {
        assertThrows(IllegalArgumentException.class, () -> new EventRing(0));
    }

    @Test
    void aFailingListenerNeitherReachesTheEmitterNorStopsTheOthers() {
        EventBus bus = new EventBus(8);
        AtomicInteger seen = new AtomicInteger();
        bus.listen(s -> { throw new IllegalStateException("a broken tail"); });
        Runnable stop = bus.listen(s -> seen.incrementAndGet());
        bus.emit(push(1, "p"));
        stop.run();
        bus.emit(push(2, "p"));
        assertEquals(1, seen.get(), "removed listeners hear nothing more");
        assertEquals(2, bus.ring().after(0, 10, e -> true).size(), "the ring has every event");
    }

    @Test
    void fieldsAreFlatWithTypeTimeAndPartitionFirstAndNoNulls() {
        ServerEvent e = new ServerEvent.PushRejected(5, "p", "a", "c", "cc", 2, null);
        assertEquals(List.of("type", "atMs", "partition", "actorId", "clientId", "clientCommitId", "operations"),
                List.copyOf(e.fields().keySet()));
        assertEquals("push.rejected", e.fields().get("type"));
    }
}

package syncular.jakarta.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RateWindowTest {
    private static EventRing.Sequenced at(ServerEvent e) { return new EventRing.Sequenced(1, e); }

    private static ServerEvent request(long atMs, String outcome) {
        return new ServerEvent.RequestHandled(atMs, "p", "a", "c", "http", 1_000_000, 1, 1, outcome, null, 0, true);
    }

    @Test
    void countsPerSecondOfEventTimeOldestFirstWithTotals() {
        RateWindow w = new RateWindow();
        w.accept(at(request(10_100, "ok")));
        w.accept(at(request(10_900, "rejected")));
        w.accept(at(request(12_000, "ok")));
        w.accept(at(new ServerEvent.PushApplied(12_500, "p", "a", "c", "c1", 1L, 1, false)));
        w.accept(at(new ServerEvent.PushApplied(12_500, "p", "a", "c", "c1", 1L, 1, true)));   // a replay: no push
        w.accept(at(new ServerEvent.PushConflicted(12_600, "p", "a", "c", "c2", 1, 1)));

        Map<String, Object> s = w.snapshot(12_999, 3);
        assertEquals(Map.of("requests", 3L, "errors", 1L, "pushesApplied", 1L, "pushesRejected", 0L,
                "pushesConflicted", 1L, "pulls", 0L), s.get("totals"));
        List<?> points = (List<?>) s.get("perSecond");
        assertEquals(List.of(10L, 11L, 12L), points.stream().map(p -> ((Map<?, ?>) p).get("second")).toList());
        assertEquals(2L, ((Map<?, ?>) points.get(0)).get("requests"));
        assertEquals(0L, ((Map<?, ?>) points.get(1)).get("requests"));
    }

    @Test
    void aSlotIsReusedWhenItsSecondComesRoundAgainAndOldEventsAreDropped() {
        RateWindow w = new RateWindow();
        w.accept(at(request(5_000, "ok")));
        long later = 5_000 + RateWindow.SECONDS * 1000L;   // the same slot, one window later
        w.accept(at(request(later, "ok")));
        w.accept(at(request(5_000, "ok")));   // older than the window: not counted over the new second
        Map<?, ?> totals = (Map<?, ?>) w.snapshot(later, RateWindow.SECONDS).get("totals");
        assertEquals(1L, totals.get("requests"));
    }

    @Test
    void theWindowIsBounded() {
        assertThrows(IllegalArgumentException.class, () -> new RateWindow().snapshot(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new RateWindow().snapshot(0, RateWindow.SECONDS + 1));
    }
}

package syncular.jakarta.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EventMetricsTest {
    @Test
    void pushesRequestsAndSocketsAreCountedByOutcomeAndRenderAsPrometheusText() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EventBus bus = new EventBus(64);
        bus.listen(new EventMetrics(registry));
        for (int i = 0; i < 3; i++) {
            bus.emit(new ServerEvent.PushApplied(i, "p", "a", "c", "cc" + i, (long) i, 1, false));
        }
        bus.emit(new ServerEvent.PushApplied(9, "p", "a", "c", "cc0", 0L, 1, true));
        bus.emit(new ServerEvent.PushConflicted(9, "p", "a", "c", "cc5", 1, 1));
        bus.emit(new ServerEvent.RequestHandled(9, "p", "a", "c", "http", 12_400_000, 100, 300, "ok", null, 1, true));
        bus.emit(new ServerEvent.RequestHandled(9, "p", "a", "c", "http", 2_000_000, 10, 0, "rejected", "sync.auth_required",
                0, false));
        bus.emit(new ServerEvent.AuthFailed(9, "", "socket", "sync.auth_required"));
        bus.emit(new ServerEvent.BackfillBatch(9, "p", "cp", 500, 500, 40, 7, false));
        bus.emit(new ServerEvent.BackfillBatch(9, "q", "cp", 20, 20, 40, 3, false));

        Map<String, Double> s = PrometheusText.parse(registry.scrape());
        assertEquals(3.0, s.get("syncular_pushes_total{outcome=\"applied\"}"));
        assertEquals(1.0, s.get("syncular_pushes_total{outcome=\"replayed\"}"));
        assertEquals(1.0, s.get("syncular_pushes_total{outcome=\"conflicted\"}"));
        assertEquals(1.0, s.get("syncular_requests_seconds_count{outcome=\"ok\",transport=\"http\"}"));
        assertEquals(0.0124, s.get("syncular_requests_seconds_sum{outcome=\"ok\",transport=\"http\"}"), 1e-9,
                "recorded to the nanosecond, not truncated to 12 ms");
        assertEquals(1.0, s.get("syncular_requests_seconds_count{outcome=\"rejected\",transport=\"http\"}"));
        assertEquals(110.0, s.get("syncular_request_bytes_in_total{transport=\"http\"}"));
        assertEquals(1.0, s.get("syncular_auth_failures_total{transport=\"socket\"}"));
        assertEquals(520.0, s.get("syncular_backfill_rows_total"));
        assertEquals(7.0, s.get("syncular_backfill_lag_commits"), "the furthest-behind backfill");
        bus.emit(new ServerEvent.BackfillBatch(9, "p", "cp", 0, 0, 1, 0, true));
        assertEquals(3.0, PrometheusText.parse(registry.scrape()).get("syncular_backfill_lag_commits"),
                "an activated checkpoint leaves the gauge");
        // a histogram: the 12 ms request is in every bucket from 16 ms up, not in the 1 ms one
        assertTrue(s.keySet().stream().anyMatch(k -> k.startsWith("syncular_requests_seconds_bucket{")));
        List<String> buckets = s.keySet().stream().filter(k -> k.startsWith("syncular_requests_seconds_bucket{")
                && k.contains("outcome=\"ok\"") && k.contains("le=\"+Inf\"")).toList();
        assertEquals(1, buckets.size());
        assertEquals(1.0, s.get(buckets.get(0)));
    }
}

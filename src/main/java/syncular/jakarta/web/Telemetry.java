package syncular.jakarta.web;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import syncular.jakarta.events.EventBus;
import syncular.jakarta.events.EventMetrics;
import syncular.jakarta.events.RateWindow;

/**
 * This node's events and metrics (issue 20), for the application's whole life: the console's ring and live tails
 * and the Prometheus registry continue across a conformance reset, which replaces the {@link SyncRuntime}'s parts.
 * Every event counts into the metrics as it is emitted.
 */
@ApplicationScoped
public class Telemetry {
    /** How many recent events a node keeps for the console (about a minute of a busy node's pushes). */
    static final int EVENT_RING_SIZE = 4096;

    private final EventBus events = new EventBus(EVENT_RING_SIZE);
    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final RateWindow rates = new RateWindow();

    public Telemetry() {
        events.listen(new EventMetrics(meters));
        events.listen(rates);
    }

    /** The console's per-second request and push counts. */
    public RateWindow rates() { return rates; }

    public EventBus events() { return events; }

    public PrometheusMeterRegistry meters() { return meters; }
}

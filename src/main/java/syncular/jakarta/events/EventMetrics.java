package syncular.jakarta.events;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The node's metrics, counted from its events (issue 20): what an operator graphs and alerts on. Low-cardinality by
 * design: no partition, actor or client tags (a fleet has millions), only outcomes and transports. Names follow
 * Micrometer's conventions; the Prometheus registry renders them {@code syncular_requests_seconds_bucket} etc.
 */
public final class EventMetrics implements Consumer<EventRing.Sequenced> {
    private final MeterRegistry registry;

    /**
     * Meters by name and tag values, so an event costs a map read, not a registration lookup (Micrometer builds and
     * sorts an id for every {@code register}; under load that was ~1.5 % of the server's CPU, on the request
     * threads). Bounded: names and tag values are a fixed, low-cardinality set.
     */
    private final java.util.Map<String, Counter> counters = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, Timer> timers = new java.util.concurrent.ConcurrentHashMap<>();

    /** The last batch's lag of each checkpoint still backfilling on this node. */
    private final java.util.Map<String, Long> backfillLag = new java.util.concurrent.ConcurrentHashMap<>();

    public EventMetrics(MeterRegistry registry) {
        this.registry = registry;
        io.micrometer.core.instrument.Gauge.builder("syncular.backfill.lag.commits", backfillLag,
                        m -> m.values().stream().mapToLong(Long::longValue).max().orElse(0))
                .description("commits the log head is above the watermark of the furthest-behind backfill, as of "
                        + "its last batch on this node (0: none running)").register(registry);
    }

    @Override
    public void accept(EventRing.Sequenced sequenced) {
        ServerEvent event = sequenced.event();
        if (event instanceof ServerEvent.RequestHandled e) {
            timer("syncular.requests", "sync requests answered (HTTP and socket rounds)",
                    "transport", e.transport(), "outcome", e.outcome())
                    .record(e.durationNanos(), TimeUnit.NANOSECONDS);
            counter("syncular.request.bytes.in", "request body bytes", "transport", e.transport())
                    .increment(e.bytesIn());
            counter("syncular.request.bytes.out", "response body bytes", "transport", e.transport())
                    .increment(e.bytesOut());
        } else if (event instanceof ServerEvent.PushApplied e) {
            pushes(e.replay() ? "replayed" : "applied");
        } else if (event instanceof ServerEvent.PushRejected) {
            pushes("rejected");
        } else if (event instanceof ServerEvent.PushConflicted) {
            pushes("conflicted");
        } else if (event instanceof ServerEvent.PullServed e) {
            counter("syncular.pulls", "pulls answered").increment();
            if (e.bootstraps() > 0) {
                counter("syncular.bootstraps", "subscriptions answered with bootstrap pages")
                        .increment(e.bootstraps());
            }
            if (e.bootstrapBytes() > 0) {
                counter("syncular.bootstrap.bytes", "bootstrap page bytes referenced or inlined")
                        .increment(e.bootstrapBytes());
            }
            counter("syncular.pull.changes", "changes sent in incremental pulls").increment(e.changes());
        } else if (event instanceof ServerEvent.SegmentBuilt) {
            segments("built");
        } else if (event instanceof ServerEvent.SegmentReused) {
            segments("reused");
        } else if (event instanceof ServerEvent.SegmentServed e) {
            segments("ok".equals(e.outcome()) ? "served" : "refused");
        } else if (event instanceof ServerEvent.SocketOpened) {
            counter("syncular.sockets.opened", "realtime sockets attached").increment();
        } else if (event instanceof ServerEvent.SocketClosed) {
            counter("syncular.sockets.closed", "realtime sockets closed").increment();
        } else if (event instanceof ServerEvent.SlowConsumer) {
            counter("syncular.sockets.slow.consumers",
                    "deltas dropped for a catch-up wake: the socket was not reading").increment();
        } else if (event instanceof ServerEvent.FanoutCompleted e) {
            timer("syncular.fanout", "one commit handed to this node's sessions of its partition")
                    .record(e.durationMicros(), TimeUnit.MICROSECONDS);
        } else if (event instanceof ServerEvent.BackfillBatch e) {
            counter("syncular.backfill.rows", "rows projected by RFC 0007 backfills").increment(e.rows());
            timer("syncular.backfill.batches", "backfill batches").record(e.durationMs(), TimeUnit.MILLISECONDS);
            String key = e.partition() + '\u0000' + e.checkpoint();
            if (e.activated()) backfillLag.remove(key);
            else backfillLag.put(key, e.lagCommits());
        } else if (event instanceof ServerEvent.PruneCompleted e) {
            counter("syncular.prunes", "retention prunes that moved a horizon").increment();
            counter("syncular.pruned.commits", "commits removed by retention").increment(e.removedCommits());
        } else if (event instanceof ServerEvent.AuthFailed e) {
            counter("syncular.auth.failures", "requests and sockets refused for their credentials",
                    "transport", e.transport()).increment();
        } else if (event instanceof ServerEvent.ReadinessChanged) {
            counter("syncular.readiness.changes", "readiness flips").increment();
        } else if (event instanceof ServerEvent.OperatorAction e) {
            counter("syncular.operator.actions", "console actions",
                    "action", e.action(), "outcome", e.outcome()).increment();
        }
    }

    private void pushes(String outcome) {
        counter("syncular.pushes", "push commits answered", "outcome", outcome).increment();
    }

    private void segments(String event) {
        counter("syncular.segments", "SQLite images built or reused, segment downloads served or refused", "event", event)
                .increment();
    }

    private Counter counter(String name, String help, String... tags) {
        return counters.computeIfAbsent(key(name, tags),
                k -> Counter.builder(name).description(help).tags(tags).register(registry));
    }

    private Timer timer(String name, String help, String... tags) {
        return timers.computeIfAbsent(key(name, tags), k -> Timer.builder(name).description(help).tags(tags)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry));
    }

    private static String key(String name, String... tags) {
        return tags.length == 0 ? name : name + '\u0000' + String.join("\u0000", tags);
    }
}

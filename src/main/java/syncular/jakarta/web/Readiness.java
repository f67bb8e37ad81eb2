package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.host.Clock;

/**
 * What {@code /health/ready} reports: one named check per start-up concern (database, schema, storage, serve gate).
 * Thread-safe; written by {@link ServerLifecycle} and {@link SyncRuntime}, read by every probe.
 *
 * <p>Each check has two texts. The {@code reason} is a coarse, fixed phrase ("unreachable", "installing", "refusing:
 * schema migration in progress") that the unauthenticated probe shows; it never carries a path, a host, a user, a
 * product version or a driver message. The {@code detail} is the operator's text with all of that, served only to
 * the admin role ({@code GET admin/health}).
 */
@ApplicationScoped
public class Readiness {
    /** One check's state: {@code reason} for everyone, {@code detail} for the admin role only. */
    public record Check(String name, boolean up, String reason, String detail) { }

    private final Map<String, Check> checks = new ConcurrentHashMap<>();
    @Inject
    Telemetry telemetry;
    /** What the last change reported, so a flip is one {@code readiness.changed} event, a repeat none. */
    private Boolean reported;

    @jakarta.annotation.PostConstruct
    void gauge() {
        if (telemetry == null) return;
        io.micrometer.core.instrument.Gauge.builder("syncular.ready", this, r -> r.isReady() ? 1 : 0)
                .description("1 while this node is ready to serve").register(telemetry.meters());
    }

    public void up(String name, String reason, String detail) { put(new Check(name, true, reason, detail)); }

    public void down(String name, String reason, String detail) { put(new Check(name, false, reason, detail)); }

    private void put(Check check) {
        checks.put(check.name(), check);
        boolean ready = isReady();
        synchronized (this) {
            if (reported != null && reported == ready) return;
            reported = ready;
        }
        List<String> failing = checks().stream().filter(c -> !c.up()).map(Check::name).toList();
        if (telemetry != null) {
            telemetry.events().emit(new ServerEvent.ReadinessChanged(Clock.SYSTEM.nowMs(), ready, failing));
        }
    }

    /** The checks in a stable order (by name). A server with no checks yet is not ready. */
    public List<Check> checks() {
        List<Check> list = new ArrayList<>(checks.values());
        list.sort((a, b) -> a.name().compareTo(b.name()));
        return list;
    }

    public boolean isReady() {
        List<Check> list = checks();
        return !list.isEmpty() && list.stream().allMatch(Check::up);
    }
}

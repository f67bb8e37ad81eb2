package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@code /health/ready} reports: one named check per start-up concern (database, schema; later issues add the
 * migration and the serve gate). Thread-safe; written by {@link ServerLifecycle}, read by every probe.
 */
@ApplicationScoped
public class Readiness {
    /** One check's state; {@code detail} is operator-facing text without secrets. */
    public record Check(String name, boolean up, String detail) { }

    private final Map<String, Check> checks = new ConcurrentHashMap<>();

    public void up(String name, String detail) { checks.put(name, new Check(name, true, detail)); }

    public void down(String name, String detail) { checks.put(name, new Check(name, false, detail)); }

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

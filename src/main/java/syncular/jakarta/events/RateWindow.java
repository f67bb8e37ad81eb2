package syncular.jakarta.events;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Per-second counts of the node's recent requests and pushes (issue 20): what the console's request-rate and
 * error-rate charts draw. One slot per second for the last {@link #SECONDS} seconds of event time; a slot is reused
 * when its second comes round again. Metrics for scrapers live in {@link EventMetrics}; this is the console's own
 * short memory.
 */
public final class RateWindow implements Consumer<EventRing.Sequenced> {
    /** How far back the window reaches. */
    public static final int SECONDS = 600;

    /** The counted series, in the order a chart shows them. */
    public enum Series { REQUESTS, ERRORS, PUSHES_APPLIED, PUSHES_REJECTED, PUSHES_CONFLICTED, PULLS }

    private final long[] second = new long[SECONDS];
    private final long[][] counts = new long[SECONDS][Series.values().length];

    @Override
    public void accept(EventRing.Sequenced s) {
        ServerEvent e = s.event();
        if (e instanceof ServerEvent.RequestHandled r) {
            count(r.atMs(), Series.REQUESTS);
            if (!"ok".equals(r.outcome())) count(r.atMs(), Series.ERRORS);
        } else if (e instanceof ServerEvent.PushApplied p && !p.replay()) {
            count(p.atMs(), Series.PUSHES_APPLIED);
        } else if (e instanceof ServerEvent.PushRejected p) {
            count(p.atMs(), Series.PUSHES_REJECTED);
        } else if (e instanceof ServerEvent.PushConflicted p) {
            count(p.atMs(), Series.PUSHES_CONFLICTED);
        } else if (e instanceof ServerEvent.PullServed p) {
            count(p.atMs(), Series.PULLS);
        }
    }

    private synchronized void count(long atMs, Series series) {
        long sec = Math.floorDiv(atMs, 1000);
        int slot = (int) Math.floorMod(sec, SECONDS);
        if (second[slot] != sec) {
            if (second[slot] > sec) return;   // older than the window
            second[slot] = sec;
            java.util.Arrays.fill(counts[slot], 0);
        }
        counts[slot][series.ordinal()]++;
    }

    /**
     * The last {@code seconds} seconds up to the one containing {@code nowMs}, oldest first: each second's counts by
     * series, and the totals.
     */
    public synchronized Map<String, Object> snapshot(long nowMs, int seconds) {
        if (seconds < 1 || seconds > SECONDS) throw new IllegalArgumentException("window is 1.." + SECONDS + " s");
        long now = Math.floorDiv(nowMs, 1000);
        long[] totals = new long[Series.values().length];
        List<Map<String, Object>> points = new ArrayList<>();
        for (long sec = now - seconds + 1; sec <= now; sec++) {
            int slot = (int) Math.floorMod(sec, SECONDS);
            Map<String, Object> point = new LinkedHashMap<>();
            point.put("second", sec);
            for (Series series : Series.values()) {
                long n = second[slot] == sec ? counts[slot][series.ordinal()] : 0;
                point.put(name(series), n);
                totals[series.ordinal()] += n;
            }
            points.add(point);
        }
        Map<String, Object> total = new LinkedHashMap<>();
        for (Series series : Series.values()) total.put(name(series), totals[series.ordinal()]);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("windowSeconds", seconds);
        out.put("totals", total);
        out.put("perSecond", points);
        return out;
    }

    private static String name(Series s) {
        String[] parts = s.name().toLowerCase(java.util.Locale.ROOT).split("_");
        StringBuilder b = new StringBuilder(parts[0]);
        for (int i = 1; i < parts.length; i++) b.append(Character.toUpperCase(parts[i].charAt(0))).append(parts[i], 1, parts[i].length());
        return b.toString();
    }
}

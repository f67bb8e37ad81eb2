package syncular.jakarta.sync;

import syncular.jakarta.wire.PullHeader;

/** PULL_HEADER limits after the §4.2 silent clamps (0 = default). */
public record PullLimits(int limitCommits, int limitSnapshotRows, int maxSnapshotPages, int accept) {
    public static PullLimits clamp(PullHeader h) {
        return new PullLimits(clamp(h.limitCommits(), 1, 1000, 1000), clamp(h.limitSnapshotRows(), 1, 50_000, 1000),
                clamp(h.maxSnapshotPages(), 1, 50, 4), h.accept());
    }

    private static int clamp(int value, int min, int max, int dflt) {
        if (value == 0) return dflt;
        return Math.min(max, Math.max(min, value));
    }

    public boolean accepts(int bit) { return (accept & bit) != 0; }
}

package syncular.jakarta.sync;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import syncular.jakarta.wire.ErrorCode;

/**
 * Admission of pushing requests per partition, so that one partition can never starve the others (issue 13).
 *
 * <p>Every push of a partition serializes on that partition's lock (§6.3). By group commit ({@link GroupCommit})
 * only a group's leader holds a pooled connection for it; the requests queued for the next group hold an HTTP
 * worker and their commits in memory. Without a bound, one busy or stuck partition (its lock held by a long
 * backfill batch, an operator's session, or a flood of clients) holds workers without end. So at most
 * {@code concurrency} requests of one partition are in the push phase at once; up to {@code queue} more wait here
 * for at most {@code waitMs};
 * anything beyond is refused at once. A refusal is {@code sync.rate_limited} (retryable, action {@code retryLater};
 * in-band after {@code RESP_HEADER}): the client keeps its outbox and retries, none of that request's commits was
 * applied. Pulls are not admitted here: they wait on no lock, hold one connection for a few round trips, and holding
 * them back would cost a busy partition throughput for nothing.
 *
 * <p>The counterpart in the database is the lock timeout of the push transaction (storage), which bounds how long
 * an admitted push waits for the partition lock itself.
 */
public final class PartitionAdmission {
    /**
     * @param concurrency requests of one partition in the push phase at once
     *                    ({@code syncular.limits.partition-concurrency})
     * @param queue       requests of one partition that may wait for a turn ({@code syncular.limits.partition-queue})
     * @param waitMs      how long one may wait ({@code syncular.limits.partition-wait-ms})
     */
    public record Settings(int concurrency, int queue, long waitMs) {
        public static final Settings DEFAULTS = new Settings(64, 64, 5_000);

        public Settings {
            if (concurrency < 1 || queue < 0 || waitMs < 0) throw new IllegalArgumentException("admission settings");
        }
    }

    /** A turn taken; closing it gives it back. */
    public interface Turn extends AutoCloseable {
        @Override
        void close();
    }

    /** One partition's turns and how many requests hold or wait for one (the entry goes when nobody does). */
    private static final class Gate {
        final Semaphore turns;
        int present;

        Gate(int concurrency) { this.turns = new Semaphore(concurrency, true); }
    }

    private final Settings settings;
    private final ConcurrentHashMap<String, Gate> gates = new ConcurrentHashMap<>();

    public PartitionAdmission(Settings settings) { this.settings = settings; }

    /**
     * Waits for a turn in {@code partition}; throws {@code sync.rate_limited} when the partition already has its
     * queue full or no turn came within the wait.
     */
    public Turn enter(String partition) {
        int[] present = new int[1];
        Gate gate = gates.compute(partition, (k, g) -> {
            Gate x = g == null ? new Gate(settings.concurrency()) : g;
            present[0] = ++x.present;
            return x;
        });
        boolean admitted = false;
        try {
            if (present[0] > settings.concurrency() + settings.queue()) {
                throw busy("too many requests of this partition are waiting");
            }
            try {
                admitted = gate.turns.tryAcquire(settings.waitMs(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (!admitted) throw busy("no turn in this partition within " + settings.waitMs() + " ms");
        } finally {
            if (!admitted) leave(partition);
        }
        java.util.concurrent.atomic.AtomicBoolean given = new java.util.concurrent.atomic.AtomicBoolean();
        return () -> {
            if (!given.compareAndSet(false, true)) return;
            gate.turns.release();
            leave(partition);
        };
    }

    private void leave(String partition) {
        gates.computeIfPresent(partition, (k, g) -> --g.present == 0 ? null : g);
    }

    private static SyncException busy(String why) {
        return new SyncException(ErrorCode.SYNC_RATE_LIMITED, "the partition is busy (" + why + "); retry later");
    }
}

package syncular.jakarta.sync;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToIntFunction;

/**
 * Group commit per partition (issue 14). Every push of a partition serializes on the partition lock, so pushes
 * applied one transaction each spend most of their time queued for it, each paying the lock, its round trips and a
 * COMMIT. Here a request that finds its partition idle leads: it applies its own work and everything that queued
 * while it did so, as ONE group through {@code apply} (one transaction), and then hands the lead to the oldest
 * request still queued. Everybody else waits, holding no connection, until a leader has applied its work. Work that
 * takes no lock may allow several leaders of a partition at once ({@code maxLeaders}): a request then waits only
 * while that many groups are applied.
 *
 * <p>A group takes whole requests in arrival order, up to {@code maxUnits} units of work (commits); a request
 * larger than that goes alone. {@code apply} returns one result per item of its group, in order; if it throws, every
 * item of the group gets the throwable. {@code apply} runs on the thread that submitted the group's first item (the
 * leader), so that item's own resources (its session) are the group's. The partitions' queues are independent:
 * partitions never wait for each other here (the database lock is per partition too).
 *
 * <p>The realtime hub groups a partition's WebSocket attaches the same way: the preambles of the attaches that queued
 * while one was read are read together, in one round trip ({@code StorageSession#preambles}, issue 15); the sync
 * handler groups request ends (client records and the serve-gate re-read) likewise.
 */
public final class GroupCommit<I, R> {
    private final int maxUnits;
    private final int maxLeaders;
    private final ToIntFunction<I> units;
    private final BiFunction<String, List<I>, List<R>> apply;
    private final ConcurrentHashMap<String, Lane<I, R>> lanes = new ConcurrentHashMap<>();

    /** One group of a partition at a time: what pushes need (the partition lock serializes them anyway). */
    public GroupCommit(int maxUnits, ToIntFunction<I> units, BiFunction<String, List<I>, List<R>> apply) {
        this(maxUnits, 1, units, apply);
    }

    /**
     * Up to {@code maxLeaders} groups of a partition at a time: for work that takes no lock (reads, request ends),
     * where a request that waited for the group ahead of it to finish would wait for nothing but the grouping.
     */
    public GroupCommit(int maxUnits, int maxLeaders, ToIntFunction<I> units,
                       BiFunction<String, List<I>, List<R>> apply) {
        if (maxUnits < 1) throw new IllegalArgumentException("maxUnits must be at least 1");
        if (maxLeaders < 1) throw new IllegalArgumentException("maxLeaders must be at least 1");
        this.maxUnits = maxUnits;
        this.maxLeaders = maxLeaders;
        this.units = units;
        this.apply = apply;
    }

    /**
     * One queued request. {@code result} and {@code failure} are written before the volatile {@code done}, so a
     * waiter that sees {@code done} sees them. Each waiter is woken by its own unpark, never by a broadcast: with
     * dozens of a partition's requests queued, waking all of them for every group cost their CPU and context switches.
     */
    private static final class Waiter<I, R> {
        final I item;
        final Thread thread = Thread.currentThread();
        volatile boolean lead;
        volatile boolean done;
        R result;
        RuntimeException failure;

        Waiter(I item) { this.item = item; }
    }

    /**
     * One partition's queue of waiting requests; {@code leaders}: how many groups are being applied; {@code retired}
     * once it left the map (idle), so a request that looked it up just before must look again rather than lead a
     * group of the partition beside the leaders of the lane that replaced it. Guarded by its own monitor.
     */
    private static final class Lane<I, R> {
        final ArrayDeque<Waiter<I, R>> queue = new ArrayDeque<>();
        int leaders;
        boolean retired;
    }

    /** Applies {@code item} in a group of {@code partition}; returns its result or throws its group's failure. */
    public R submit(String partition, I item) {
        Waiter<I, R> me = new Waiter<>(item);
        Lane<I, R> lane;
        while (true) {
            lane = lanes.computeIfAbsent(partition, k -> new Lane<>());
            synchronized (lane) {
                if (lane.retired) continue;   // left the map after the lookup: the partition has a new lane
                if (lane.leaders < maxLeaders) {
                    lane.leaders++;
                    me.lead = true;
                } else {
                    lane.queue.addLast(me);
                }
                break;
            }
        }
        boolean interrupted = false;
        while (!me.lead && !me.done) {
            LockSupport.park(this);
            // the work is queued and will be applied: leaving now would answer a push whose outcome is unknown;
            // wait for it, then restore the flag
            if (Thread.interrupted()) interrupted = true;
        }
        if (interrupted) Thread.currentThread().interrupt();
        if (me.done) return answer(me);
        List<Waiter<I, R>> group;
        synchronized (lane) {
            group = take(me, lane);
        }
        try {
            List<I> items = new ArrayList<>(group.size());
            for (Waiter<I, R> w : group) items.add(w.item);
            List<R> results;
            try {
                results = apply.apply(partition, items);
            } catch (RuntimeException e) {
                for (Waiter<I, R> w : group) w.failure = e;
                results = null;
            }
            if (results != null) {
                for (int i = 0; i < group.size(); i++) group.get(i).result = results.get(i);
            }
        } catch (Error e) {
            for (Waiter<I, R> w : group) w.failure = new IllegalStateException("the group failed", e);
            throw e;
        } finally {
            Waiter<I, R> next;
            synchronized (lane) {
                next = lane.queue.pollFirst();
                if (next != null) {
                    next.lead = true;   // this group's turn passes to the oldest request waiting
                } else if (--lane.leaders == 0) {
                    lane.retired = true;
                    lanes.remove(partition, lane);
                }
            }
            for (Waiter<I, R> w : group) {
                w.done = true;
                if (w != me) LockSupport.unpark(w.thread);
            }
            if (next != null) LockSupport.unpark(next.thread);
        }
        return answer(me);
    }

    /** The group a leader applies: the leader and the whole requests waiting in order after it, up to the cap. */
    private List<Waiter<I, R>> take(Waiter<I, R> leader, Lane<I, R> lane) {
        List<Waiter<I, R>> group = new ArrayList<>();
        group.add(leader);
        int taken = units.applyAsInt(leader.item);
        while (!lane.queue.isEmpty()) {
            int next = units.applyAsInt(lane.queue.peekFirst().item);
            if (taken + next > maxUnits) break;
            group.add(lane.queue.pollFirst());
            taken += next;
        }
        return group;
    }

    private R answer(Waiter<I, R> me) {
        if (me.failure != null) throw me.failure;
        return me.result;
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The group commit primitive under real threads: every item is applied exactly once and answered with its own
 * result, one partition never has more groups applied at once than its leaders allow (one for pushes) while
 * partitions run in parallel, a group never exceeds its unit cap (a larger item goes alone), and a group's failure
 * reaches each of its items.
 */
class GroupCommitTest {
    @Test @Timeout(60)
    void everyItemIsAppliedOnceInGroupsThatNeverOverlapWithinAPartition() throws Exception {
        stress(1);
    }

    /** Work that takes no lock (request ends) may have several groups of a partition applied at once, never more. */
    @Test @Timeout(60)
    void withSeveralLeadersEveryItemIsAppliedOnceInAtMostThatManyGroupsAtOnce() throws Exception {
        stress(3);
    }

    @Test @Timeout(30)
    void aRequestWaitsOnlyWhileAsManyGroupsAsAllowedAreApplied() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger applying = new AtomicInteger();
        GroupCommit<String, String> gc = new GroupCommit<>(64, 2, item -> 1, (partition, items) -> {
            applying.incrementAndGet();
            if (items.get(0).startsWith("held")) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return items.stream().map(i -> "ok " + i).toList();
        });
        List<Thread> held = new ArrayList<>();
        for (String item : List.of("held-1", "held-2")) {
            Thread t = new Thread(() -> gc.submit("p", item));
            held.add(t);
            t.start();
        }
        while (applying.get() < 2) Thread.sleep(1);   // two groups of one partition at once
        Map<String, Object> outcome = new ConcurrentHashMap<>();
        Thread third = new Thread(() -> outcome.put("c", gc.submit("p", "c")));
        third.start();
        while (third.getState() != Thread.State.WAITING) Thread.sleep(1);
        assertEquals(2, applying.get(), "the third waits while two are applied");
        release.countDown();
        third.join();
        for (Thread t : held) t.join();
        assertEquals("ok c", outcome.get("c"));
        assertEquals("ok d", gc.submit("p", "d"), "the lane serves the next group");
        assertThrows(IllegalArgumentException.class, () -> new GroupCommit<String, String>(1, 0, i -> 1, (p, i) -> i));
    }

    /**
     * 24 threads over three partitions submit 200 items each, now and then one larger than the cap: every item is
     * applied once and answered with its own result, at most {@code maxLeaders} groups of a partition at once.
     */
    private static void stress(int maxLeaders) throws Exception {
        Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger groups = new AtomicInteger();
        AtomicInteger oversized = new AtomicInteger();
        Map<Integer, Integer> applied = new ConcurrentHashMap<>();
        GroupCommit<int[], String> gc = new GroupCommit<>(8, maxLeaders, item -> item[1], (partition, items) -> {
            AtomicInteger n = inFlight.computeIfAbsent(partition, p -> new AtomicInteger());
            if (n.incrementAndGet() > maxLeaders) overlaps.incrementAndGet();
            groups.incrementAndGet();
            int units = items.stream().mapToInt(i -> i[1]).sum();
            if (units > 8 && items.size() > 1) oversized.incrementAndGet();
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);   // long enough for another group to try
            List<String> out = new ArrayList<>();
            for (int[] i : items) {
                applied.merge(i[0], 1, Integer::sum);
                out.add(partition + ":" + i[0]);
            }
            n.decrementAndGet();
            return out;
        });
        int threads = 24;
        int perThread = 200;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        int id = thread * perThread + i;
                        String partition = "p" + (thread % 3);
                        int units = i % 50 == 0 ? 12 : 1 + i % 3;   // now and then one larger than the cap
                        String r = gc.submit(partition, new int[] {id, units});
                        if (!r.equals(partition + ":" + id)) wrong.add(r + " for " + id);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            all.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : all) th.join();
        assertEquals(List.of(), wrong, "every item answered with its own result");
        assertEquals(threads * perThread, applied.size());
        assertTrue(applied.values().stream().allMatch(v -> v == 1), "no item applied twice");
        assertEquals(0, overlaps.get(), "never more than " + maxLeaders + " of a partition's groups at once");
        assertEquals(0, oversized.get(), "a group keeps to its cap; a larger item goes alone");
        assertTrue(groups.get() <= threads * perThread);
    }

    @Test @Timeout(30)
    void aGroupsFailureReachesEachOfItsItemsAndTheNextGroupStillRuns() throws Exception {
        RuntimeException boom = new IllegalStateException("boom");
        CountDownLatch leaderIn = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        GroupCommit<String, String> gc = new GroupCommit<>(64, item -> 1, (partition, items) -> {
            if (calls.incrementAndGet() == 1) {
                leaderIn.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return List.of("first");
            }
            if (items.contains("fail")) throw boom;
            return items.stream().map(i -> "ok " + i).toList();
        });
        Thread leader = new Thread(() -> gc.submit("p", "lead"));
        leader.start();
        leaderIn.await();
        Map<String, Object> outcome = new ConcurrentHashMap<>();
        List<Thread> queued = new ArrayList<>();
        for (String item : List.of("a", "fail", "b")) {
            Thread t = new Thread(() -> {
                try {
                    outcome.put(item, gc.submit("p", item));
                } catch (RuntimeException e) {
                    outcome.put(item, e);
                }
            });
            queued.add(t);
            t.start();
            while (t.getState() != Thread.State.WAITING) Thread.sleep(1);
        }
        release.countDown();
        leader.join();
        for (Thread t : queued) t.join();
        for (String item : List.of("a", "fail", "b")) assertSame(boom, outcome.get(item), item);
        assertEquals("ok c", gc.submit("p", "c"), "the lane serves the next group");
        assertThrows(IllegalArgumentException.class, () -> new GroupCommit<String, String>(0, i -> 1, (p, i) -> i));
    }
}

package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import syncular.jakarta.storage.CommitWindow;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;

/**
 * The commit log's recent tail, kept in memory per partition (issue 15): the commits this node's commit feed
 * announced, each read whole once by the realtime hub (for its fanout and for this tail), contiguous by seq and of the
 * log epoch they were read under. An incremental window (SPEC §4.5) that lies within a tail of the request's log
 * epoch is answered from it as the log answers it: the same commits with the same changes of the table that match
 * the scopes, cut at the same change count. Any other window is read from the database. A window that is empty by
 * its bounds (a client at the head) needs no tail at all.
 *
 * <p>A tail holds only what the feed announced in order: a commit that does not follow its last one (a gap the feed
 * reported as missed, a commit gone before it was read, a rewound log, another log epoch) starts it afresh. The
 * horizon is not its business: a pull checks a cursor against the horizon it read before the window, and a tail
 * holds every commit of its range whether or not a prune took it from the database since (the pull then answers as
 * if the prune had come after it, which it may have).
 *
 * <p>Bounded in bytes across partitions ({@code maxBytes}; 0 keeps nothing): past the bound an append drops the
 * appending partition's oldest commits while it holds more than half the bound, then other partitions' tails, then
 * its own oldest again; a commit larger than a quarter of the bound is not kept (its partition's tail starts afresh
 * after it).
 */
public final class RecentCommits {
    /** What a kept commit costs besides its ids, scopes and payloads (record, lists, map), closely enough. */
    static final long COMMIT_OVERHEAD = 96;
    static final long CHANGE_OVERHEAD = 160;

    private final long maxBytes;
    private final ConcurrentHashMap<String, Tail> tails = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();

    public RecentCommits(long maxBytes) {
        if (maxBytes < 0) throw new IllegalArgumentException("maxBytes must be >= 0");
        this.maxBytes = maxBytes;
    }

    /** One partition's tail: commits {@code first … first + size - 1}, all read under {@code epoch}. */
    private static final class Tail {
        String epoch;
        final ArrayList<StoredCommit> commits = new ArrayList<>();
        int head;          // commits before head were dropped (null)
        long bytes;
        boolean dropped;   // removed from the map: appends go to a fresh tail

        int size() { return commits.size() - head; }

        long firstSeq() { return commits.get(head).commitSeq(); }

        long lastSeq() { return commits.get(commits.size() - 1).commitSeq(); }

        long clear() {
            long freed = bytes;
            commits.clear();
            head = 0;
            bytes = 0;
            return freed;
        }

        long dropOldest() {
            long freed = sizeOf(commits.get(head));
            commits.set(head++, null);
            if (head > 64 && head > commits.size() / 2) {
                commits.subList(0, head).clear();
                head = 0;
            }
            bytes -= freed;
            return freed;
        }
    }

    /**
     * A commit the feed announced for {@code partition}, read whole (every table's changes) under {@code logEpoch}.
     * Called in seq order per partition (the feed's thread).
     */
    public void committed(String partition, String logEpoch, StoredCommit commit) {
        if (maxBytes == 0) return;
        long size = sizeOf(commit);
        if (size > maxBytes / 4) {
            forget(partition);
            return;
        }
        while (true) {
            Tail t = tails.computeIfAbsent(partition, p -> new Tail());
            synchronized (t) {
                if (t.dropped) continue;
                if (!logEpoch.equals(t.epoch) || t.size() == 0 || commit.commitSeq() != t.lastSeq() + 1) {
                    bytes.addAndGet(-t.clear());
                    t.epoch = logEpoch;
                }
                t.commits.add(commit);
                t.bytes += size;
                bytes.addAndGet(size);
                t.notifyAll();   // unchanged() may wait for this commit
                // a partition keeps at most half the bound while others hold the rest
                while (bytes.get() > maxBytes && t.bytes > maxBytes / 2 && t.size() > 1) {
                    bytes.addAndGet(-t.dropOldest());
                }
            }
            break;
        }
        for (String other : tails.keySet()) {
            if (bytes.get() <= maxBytes) return;
            if (!other.equals(partition)) forget(other);
        }
        Tail t = tails.get(partition);
        if (t == null) return;
        synchronized (t) {
            while (bytes.get() > maxBytes && t.size() > 1) bytes.addAndGet(-t.dropOldest());
        }
    }

    /** Drops {@code partition}'s tail: the feed missed commits of it, or its log was rewound. */
    public void forget(String partition) {
        Tail t = tails.remove(partition);
        if (t == null) return;
        synchronized (t) {
            t.dropped = true;
            bytes.addAndGet(-t.clear());
        }
    }

    /** Drops every tail (the log was wiped, the node's sockets reset). */
    public void forgetAll() {
        for (String partition : tails.keySet()) forget(partition);
    }

    /** Whether it keeps commits at all (a bound of 0 keeps none). */
    public boolean keeps() { return maxBytes > 0; }

    /** The bytes kept, as {@link #sizeOf} counts them (diagnostics and tests). */
    long bytes() { return bytes.get(); }

    /**
     * {@code query}'s window of {@code partition}'s log at {@code logEpoch}, when its bounds leave it empty or a
     * tail of that epoch holds all of it; empty when it must be read from the database. Its horizon is -1: no read
     * ran ({@link CommitWindow}), and there is no request end on it.
     */
    Optional<CommitWindow> window(String partition, String logEpoch, CommitWindowQuery query) {
        if (query.scopes().isEmpty()) return Optional.empty();   // the storage refuses it with its own error
        if (query.afterSeq() >= query.throughSeq()) return Optional.of(new CommitWindow(List.of(), -1));
        Tail t = tails.get(partition);
        if (t == null) return Optional.empty();
        List<StoredCommit> range;
        synchronized (t) {
            if (t.size() == 0 || !logEpoch.equals(t.epoch)) return Optional.empty();
            long first = t.firstSeq();
            if (query.afterSeq() + 1 < first || query.throughSeq() > t.lastSeq()) return Optional.empty();
            int from = t.head + (int) (query.afterSeq() + 1 - first);
            int to = t.head + (int) (query.throughSeq() - first) + 1;
            range = new ArrayList<>(t.commits.subList(from, to));
        }
        List<StoredCommit> commits = new ArrayList<>();
        int delivered = 0;
        for (StoredCommit c : range) {
            List<StoredChange> matched = null;
            for (StoredChange ch : c.changes()) {
                if (!ch.table().equals(query.table()) || !query.scopes().matches(ch.scopes())) continue;
                if (matched == null) matched = new ArrayList<>();
                matched.add(ch);
            }
            if (matched == null) continue;
            commits.add(new StoredCommit(c.commitSeq(), c.createdAtMs(), c.actorId(), matched));
            delivered += matched.size();
            if (delivered >= query.limitChanges()) break;
        }
        return Optional.of(new CommitWindow(commits, -1));
    }

    /**
     * Whether a tail of {@code logEpoch} holds {@code (afterSeq, throughSeq]} whole and no change of {@code table} in
     * it matches {@code scopes}: the window a client at {@code afterSeq} would pull through {@code throughSeq} is
     * empty. A tail that holds the start of the range but has not yet been given its end (the feed announces a
     * commit moments after the request read the log head) is waited for, at most {@code waitMs}. False whenever
     * the tail cannot tell.
     */
    boolean unchanged(String partition, String logEpoch, String table, ScopeFilter scopes, long afterSeq,
                      long throughSeq, long waitMs) {
        if (scopes.isEmpty()) return false;
        CommitWindowQuery query = new CommitWindowQuery(table, scopes, afterSeq, throughSeq, 1);
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        while (true) {
            Optional<CommitWindow> window = window(partition, logEpoch, query);
            if (window.isPresent()) return window.get().commits().isEmpty();
            Tail t = tails.get(partition);
            if (t == null) return false;
            synchronized (t) {
                if (t.dropped || t.size() == 0 || !logEpoch.equals(t.epoch) || afterSeq + 1 < t.firstSeq()) {
                    return false;
                }
                if (t.lastSeq() >= throughSeq) continue;   // given since the window was looked for
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                try {
                    t.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }

    /** What a kept commit costs the memory, closely enough. */
    static long sizeOf(StoredCommit commit) {
        long n = COMMIT_OVERHEAD + 2L * commit.actorId().length();
        for (StoredChange ch : commit.changes()) {
            n += CHANGE_OVERHEAD + 2L * (ch.table().length() + ch.rowId().length());
            if (ch.payload() != null) n += ch.payload().length;
            for (Map.Entry<String, String> s : ch.scopes().entrySet()) {
                n += 64 + 2L * (s.getKey().length() + s.getValue().length());
            }
        }
        return n;
    }
}

package syncular.jakarta.storage;

import java.util.Optional;

/**
 * Commits as they become visible, on every node that shares the database (SPEC §8.2: a delta follows its commit).
 * The storage signals each commit inside the commit's own transaction, so a notice is delivered iff the commit
 * committed; {@link #run} turns notices into {@link Listener#committed} calls in commitSeq order per partition,
 * fills gaps, and after a lost connection reconnects, listens again and catches up from the last seq it saw.
 *
 * <p>{@link #run} blocks its thread until {@link #close}; everything else is thread-safe.
 */
public interface CommitFeed extends AutoCloseable {
    /** Gaps larger than this are reported as {@link Listener#missed} instead of one call per commit. */
    int MAX_GAP_FILL = 1_000;

    /** Receives commits on the feed's thread; must not block on sockets. */
    interface Listener {
        /** {@code commitSeq} of {@code partition} committed; called once per seq, ascending per partition. */
        void committed(String partition, long commitSeq);

        /** Commits of {@code partition} up to {@code throughSeq} were not (and will not be) reported one by one. */
        void missed(String partition, long throughSeq);

        /**
         * {@code partition}'s log epoch was rotated (SPEC §2.1, after a backup restore): its log may have gone back
         * in time, so what anyone knew of its seqs is void. Reporting resumes from the partition's current head.
         */
        void rewound(String partition);
    }

    /** Delivers to {@code listener} until {@link #close}; reconnects with backoff after connection failures. */
    void run(Listener listener);

    /**
     * The whole commit with all its changes and the partition's log epoch read with it, or empty when it is gone
     * (pruned, or the log was wiped).
     */
    Optional<CommitRead> readCommit(String partition, long commitSeq);

    /** A commit read whole, with the log epoch it was read under (null: the partition has no registry entry). */
    record CommitRead(StoredCommit commit, String logEpoch) { }

    /** Forgets every position (the log was wiped and seqs restart): the next notice per partition starts fresh. */
    void forgetPositions();

    /** True while the dedicated listening connection is up. */
    boolean listening();

    /** Stops {@link #run} and closes its connection. */
    @Override
    void close();
}

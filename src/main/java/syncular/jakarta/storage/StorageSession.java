package syncular.jakarta.storage;

import java.util.List;
import java.util.Optional;

/**
 * One request's reads and single-statement writes on ONE pooled connection outside any transaction (autocommit),
 * bound to one partition (issue 14: a round used to check out and validate a connection per statement). The
 * connection is taken on first use and given back by {@link #release()} or {@link #close()}; a use after a release
 * takes one again, so a request holds at most one connection at a time and none while it waits for its push group.
 * Not thread-safe: one request.
 */
public interface StorageSession extends AutoCloseable {
    String partition();

    /**
     * Everything a request reads before it validates, in one round trip: the registry touch (SPEC §2.1; the activity
     * time is refreshed at most once per the storage's touch interval), the serve-gate token read after it, the
     * client record and, when {@code logHead}, the partition's commit-log head and horizon (a request that pushes
     * reads them under its push group's lock instead). The idempotency lookup of a push is its group's re-check
     * under the lock: a separate optimistic lookup cost every push a statement to spare the rare replay the lock.
     */
    RequestPreamble preamble(long authenticatedAtMs, String initialLogEpoch, int runningSchemaVersion,
                             String clientId, boolean logHead);

    /**
     * The preambles of several clients of this partition with the log head, in one round trip (issue 15: WebSocket
     * attaches that queue while another is read are read together): one touch and one serve-gate read for all, then
     * each client's record; one preamble per client id, in order. A preamble read so is no session's own: a request
     * that starts from one {@link #adopt}s it.
     */
    List<RequestPreamble> preambles(long authenticatedAtMs, String initialLogEpoch, int runningSchemaVersion,
                                    List<String> clientIds);

    /**
     * Takes a preamble read moments ago on another session of this partition, for the same client and with the log
     * head (a WebSocket attach's, for the socket's first round), as this session's own: no round trip, and the
     * request's record write compares with its client record as with one {@link #preamble} read.
     */
    RequestPreamble adopt(RequestPreamble earlier);

    /**
     * The commit window of {@code query} (SPEC §4.5) and the horizon read after it (§4.6), one round trip; with
     * {@code end}, the request's end rides on it ({@link RequestEnd}, {@link CommitWindow#endGate()}).
     */
    CommitWindow readCommitWindow(CommitWindowQuery query, Optional<RequestEnd> end);

    /** One snapshot page by keyset on row id (byte order), through the row-scope index (SPEC §4.7). */
    List<StoredRow> scanRows(RowScanQuery query);
    /**
     * The client record this session's request stores at its end: {@code record}, or nothing when it differs from
     * the one {@link #preamble} read only by an activity time within the partition touch interval.
     */
    Optional<ClientRecord> recordToStore(Optional<ClientRecord> record);

    /**
     * The end of one or more requests of this partition (read-verify-refuse) that did not ride on their last read
     * ({@link RequestEnd}): stores {@code records} (each request's {@link #recordToStore}, at most one per
     * clientId), then reads the serve-gate token, in one round trip.
     */
    ServeGate recordClientsThenReadGate(List<ClientRecord> records, int runningSchemaVersion);

    /** Gives the connection back to the pool; the next use takes one again. */
    void release();

    @Override
    default void close() { release(); }
}

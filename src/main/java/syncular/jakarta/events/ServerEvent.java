package syncular.jakarta.events;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One thing the server did, as a flat JSON-able record with a stable {@link #type()} (issue 20; the reference's
 * {@code events.ts} shapes where one exists). Times are {@code host.Clock} milliseconds of the emitter, so a virtual
 * clock stays in charge. {@link #partition()} is empty for node-wide events (readiness).
 */
public sealed interface ServerEvent {
    /** The stable name operators filter on, e.g. {@code push.applied}. */
    String type();

    long atMs();

    String partition();

    /** The actor the event is about, or null. */
    default String actorId() { return null; }

    /** The client the event is about, or null. */
    default String clientId() { return null; }

    /** type, atMs, partition first, then the event's own fields (null fields left out). */
    default Map<String, Object> fields() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type());
        m.put("atMs", atMs());
        m.put("partition", partition());
        if (actorId() != null) m.put("actorId", actorId());
        if (clientId() != null) m.put("clientId", clientId());
        details(m);
        m.values().removeIf(v -> v == null);
        return m;
    }

    /** Adds the event's own fields. */
    void details(Map<String, Object> m);

    /**
     * One sync request, HTTP or socket round, once its answer was produced (or refused). {@code outcome}: {@code ok},
     * {@code rejected} (refused before a response: auth, size, decode, gate) or {@code error} (an internal failure).
     */
    record RequestHandled(long atMs, String partition, String actorId, String clientId, String transport,
                          long durationNanos, long bytesIn, long bytesOut, String outcome, String errorCode,
                          int pushCommits, boolean pulled) implements ServerEvent {
        public String type() { return "request.handled"; }

        /**
         * Whole milliseconds, as the event's details carry it. Consumers that compare latencies keep the nanoseconds:
         * the backfill pacer's targets are a few milliseconds, where truncating to whole ones moved a p95 by a
         * quarter of the baseline in one step.
         */
        public long durationMs() { return durationNanos / 1_000_000; }

        public void details(Map<String, Object> m) {
            m.put("transport", transport);
            m.put("durationMs", durationMs());
            m.put("bytesIn", bytesIn);
            m.put("bytesOut", bytesOut);
            m.put("outcome", outcome);
            m.put("errorCode", errorCode);
            m.put("pushCommits", pushCommits);
            m.put("pulled", pulled);
        }
    }

    /** A push commit applied, or replayed from the idempotency record ({@code replay}). Emitted after COMMIT. */
    record PushApplied(long atMs, String partition, String actorId, String clientId, String clientCommitId,
                       Long commitSeq, int operations, boolean replay) implements ServerEvent {
        public String type() { return "push.applied"; }

        public void details(Map<String, Object> m) {
            m.put("clientCommitId", clientCommitId);
            m.put("commitSeq", commitSeq);
            m.put("operations", operations);
            m.put("replay", replay);
        }
    }

    /** A push commit rejected by an operation error ({@code errorCode}: the first one's §10.2 code). */
    record PushRejected(long atMs, String partition, String actorId, String clientId, String clientCommitId,
                        int operations, String errorCode) implements ServerEvent {
        public String type() { return "push.rejected"; }

        public void details(Map<String, Object> m) {
            m.put("clientCommitId", clientCommitId);
            m.put("operations", operations);
            m.put("errorCode", errorCode);
        }
    }

    /** A push commit rejected because {@code conflicts} of its operations met a newer row (§6.4). */
    record PushConflicted(long atMs, String partition, String actorId, String clientId, String clientCommitId,
                          int operations, int conflicts) implements ServerEvent {
        public String type() { return "push.conflicted"; }

        public void details(Map<String, Object> m) {
            m.put("clientCommitId", clientCommitId);
            m.put("operations", operations);
            m.put("conflicts", conflicts);
        }
    }

    /**
     * A pull answered: its subscriptions, how many bootstrapped, the commits and changes sent incrementally, the
     * segments referenced and inline bytes of bootstrap pages, and the highest cursor handed out.
     */
    record PullServed(long atMs, String partition, String actorId, String clientId, int subscriptions,
                      int bootstraps, int commits, int changes, int segments, long bootstrapBytes, long nextCursor)
            implements ServerEvent {
        public String type() { return "pull.served"; }

        public void details(Map<String, Object> m) {
            m.put("subscriptions", subscriptions);
            m.put("bootstraps", bootstraps);
            m.put("commits", commits);
            m.put("changes", changes);
            m.put("segments", segments);
            m.put("bootstrapBytes", bootstrapBytes);
            m.put("nextCursor", nextCursor);
        }
    }

    /**
     * A segment built for a pull's context and published for delivery by reference: a SQLite image (§5.3,
     * {@code mediaType} "sqlite") or a rows page (§5.2, "rows"). Rows pages sent inline are counted in
     * {@code pull.served}.
     */
    record SegmentBuilt(long atMs, String partition, String segmentId, String table, String mediaType, long bytes,
                        long rows) implements ServerEvent {
        public String type() { return "segment.built"; }

        public void details(Map<String, Object> m) { segment(m, segmentId, table, mediaType, bytes, rows); }
    }

    /**
     * A published segment reused for a pull: a live publication of its context (an image, or a rows page starting
     * where the pull's does), or an image a concurrent pull built.
     */
    record SegmentReused(long atMs, String partition, String segmentId, String table, String mediaType, long bytes,
                         long rows) implements ServerEvent {
        public String type() { return "segment.reused"; }

        public void details(Map<String, Object> m) { segment(m, segmentId, table, mediaType, bytes, rows); }
    }

    private static void segment(Map<String, Object> m, String segmentId, String table, String mediaType, long bytes,
                                long rows) {
        m.put("segmentId", segmentId);
        m.put("table", table);
        m.put("mediaType", mediaType);
        m.put("bytes", bytes);
        m.put("rows", rows);
    }

    /** A segment download (§5.4), served ({@code ok}) or refused with {@code errorCode}. */
    record SegmentServed(long atMs, String partition, String actorId, String segmentId, String outcome,
                         String errorCode, long bytes, long durationMs) implements ServerEvent {
        public String type() { return "segment.served"; }

        public void details(Map<String, Object> m) {
            m.put("segmentId", segmentId);
            m.put("outcome", outcome);
            m.put("errorCode", errorCode);
            m.put("bytes", bytes);
            m.put("durationMs", durationMs);
        }
    }

    /** A realtime socket attached (§8.1). */
    record SocketOpened(long atMs, String partition, String actorId, String clientId, String sessionId,
                        long cursor, long latestSeq) implements ServerEvent {
        public String type() { return "socket.opened"; }

        public void details(Map<String, Object> m) {
            m.put("sessionId", sessionId);
            m.put("cursor", cursor);
            m.put("latestSeq", latestSeq);
        }
    }

    /** A realtime socket closed, with the close code it got (or gave) and how long it lived. */
    record SocketClosed(long atMs, String partition, String actorId, String clientId, String sessionId, int code,
                        String reason, long durationMs) implements ServerEvent {
        public String type() { return "socket.closed"; }

        public void details(Map<String, Object> m) {
            m.put("sessionId", sessionId);
            m.put("code", code);
            m.put("reason", reason);
            m.put("durationMs", durationMs);
        }
    }

    /** A socket's outbox overflowed: its deltas were dropped for a catch-up wake (a client that does not read). */
    record SlowConsumer(long atMs, String partition, String actorId, String clientId, String sessionId,
                        long commitSeq) implements ServerEvent {
        public String type() { return "socket.slow_consumer"; }

        public void details(Map<String, Object> m) {
            m.put("sessionId", sessionId);
            m.put("commitSeq", commitSeq);
        }
    }

    /** One commit fanned out to this node's sessions of its partition. */
    record FanoutCompleted(long atMs, String partition, long commitSeq, int sessions, long durationMicros)
            implements ServerEvent {
        public String type() { return "fanout.completed"; }

        public void details(Map<String, Object> m) {
            m.put("commitSeq", commitSeq);
            m.put("sessions", sessions);
            m.put("durationMicros", durationMicros);
        }
    }

    /**
     * One backfill batch of an RFC 0007 checkpoint: {@code rows} source rows read, {@code writes} projection writes,
     * {@code lagCommits} how far the log head was above the pass's watermark when the batch committed (what the
     * catch-up still has to cover), and whether the checkpoint activated with it.
     */
    record BackfillBatch(long atMs, String partition, String checkpoint, long rows, long writes, long durationMs,
                         long lagCommits, boolean activated) implements ServerEvent {
        public String type() { return "backfill.batch"; }

        public void details(Map<String, Object> m) {
            m.put("checkpoint", checkpoint);
            m.put("rows", rows);
            m.put("writes", writes);
            m.put("durationMs", durationMs);
            m.put("lagCommits", lagCommits);
            m.put("activated", activated);
        }
    }

    /** The retention pass pruned a partition's log (§4.6): the horizon moved from one seq to another. */
    record PruneCompleted(long atMs, String partition, long previousHorizonSeq, long horizonSeq, long removedCommits,
                          String trigger) implements ServerEvent {
        public String type() { return "prune.completed"; }

        public void details(Map<String, Object> m) {
            m.put("previousHorizonSeq", previousHorizonSeq);
            m.put("horizonSeq", horizonSeq);
            m.put("removedCommits", removedCommits);
            m.put("trigger", trigger);
        }
    }

    /** This node's readiness changed; {@code failing}: the checks that are down. */
    record ReadinessChanged(long atMs, boolean ready, java.util.List<String> failing) implements ServerEvent {
        public String type() { return "readiness.changed"; }

        public String partition() { return ""; }

        public void details(Map<String, Object> m) {
            m.put("ready", ready);
            m.put("failing", failing);
        }
    }

    /** A request or socket refused for its credentials ({@code errorCode}: the §10.2 code answered). */
    record AuthFailed(long atMs, String partition, String transport, String errorCode) implements ServerEvent {
        public String type() { return "auth.failed"; }

        public void details(Map<String, Object> m) {
            m.put("transport", transport);
            m.put("errorCode", errorCode);
        }
    }

    /** An operator acted through the console (the audit trail): who, what, on what, and how it ended. */
    record OperatorAction(long atMs, String partition, String operator, String action, String target,
                          String outcome, String detail) implements ServerEvent {
        public String type() { return "admin.action"; }

        public void details(Map<String, Object> m) {
            m.put("operator", operator);
            m.put("action", action);
            m.put("target", target);
            m.put("outcome", outcome);
            m.put("detail", detail);
        }
    }
}

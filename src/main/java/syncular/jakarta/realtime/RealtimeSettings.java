package syncular.jakarta.realtime;

/**
 * Realtime limits ({@code syncular.realtime.*}).
 *
 * @param maxMessageBytes    the largest inbound message a session accepts (applied per session at open)
 * @param heartbeatMs        §8.5 heartbeat period (a WebSocket ping goes out with each heartbeat)
 * @param maxDeltaBytes      §8.2: a larger delta becomes a {@code delta-too-large} wake-up
 * @param presenceEnabled    §8.6 on/off; off ignores publishes (no fanout, no error)
 * @param maxPresenceBytes   §8.6.2 document size cap ({@code JSON.stringify} length)
 * @param outboxMaxBytes     deltas queued for one socket beyond this are dropped for a {@code catchup-required} wake;
 *                           round responses queued behind an undrained earlier one beyond this close the socket
 * @param outboxMaxMessages  control messages queued beyond this close the socket as a slow consumer
 * @param idleTimeoutMs      a socket from which nothing arrived (no message, no pong) for this long is closed;
 *                           0 = never. At least twice the heartbeat, so a client that only answers pings stays
 * @param maxRoundBytes      what one socket may buffer of an unfinished sync round (§8.7)
 * @param roundTimeoutMs     a sync round whose END has not arrived this long after its first chunk closes the socket
 * @param maxConnections     open sockets per node; past it an upgrade closes 1013 {@code sync.websocket_connection_limit}
 * @param maxConnectionsPerActor open sockets per (partition, actor) per node; 0 = no per-actor cap
 * @param presencePerSecond  presence publishes one socket may send per second (a burst of as many); past it 1013
 *                           {@code sync.rate_limited}
 * @param ackIntervalMs      acks are written to the client record at most this often per socket (coalesced)
 */
public record RealtimeSettings(int maxMessageBytes, long heartbeatMs, int maxDeltaBytes, boolean presenceEnabled,
                               int maxPresenceBytes, long outboxMaxBytes, int outboxMaxMessages, long idleTimeoutMs,
                               long maxRoundBytes, long roundTimeoutMs, int maxConnections,
                               int maxConnectionsPerActor, int presencePerSecond, long ackIntervalMs) {
    /** The default idle timeout in heartbeats: a client that missed two pings' pongs is still open. */
    public static final int DEFAULT_IDLE_HEARTBEATS = 3;

    public static final RealtimeSettings DEFAULTS =
            new RealtimeSettings(4 * 1024 * 1024, 30_000, 1024 * 1024, true, 16 * 1024, 4L * 1024 * 1024, 1024);

    public RealtimeSettings {
        if (maxMessageBytes < 64) throw new IllegalArgumentException("maxMessageBytes must be >= 64");
        if (heartbeatMs < 1) throw new IllegalArgumentException("heartbeatMs must be >= 1");
        if (maxDeltaBytes < 1) throw new IllegalArgumentException("maxDeltaBytes must be >= 1");
        if (maxPresenceBytes < 1) throw new IllegalArgumentException("maxPresenceBytes must be >= 1");
        if (outboxMaxBytes < 1) throw new IllegalArgumentException("outboxMaxBytes must be >= 1");
        if (outboxMaxMessages < 1) throw new IllegalArgumentException("outboxMaxMessages must be >= 1");
        if (idleTimeoutMs != 0 && idleTimeoutMs < 2 * heartbeatMs) {
            throw new IllegalArgumentException("idleTimeoutMs must be 0 or at least twice heartbeatMs");
        }
        if (maxRoundBytes < 64) throw new IllegalArgumentException("maxRoundBytes must be >= 64");
        if (roundTimeoutMs < 1) throw new IllegalArgumentException("roundTimeoutMs must be >= 1");
        if (maxConnections < 1) throw new IllegalArgumentException("maxConnections must be >= 1");
        if (maxConnectionsPerActor < 0) throw new IllegalArgumentException("maxConnectionsPerActor must be >= 0");
        if (presencePerSecond < 1) throw new IllegalArgumentException("presencePerSecond must be >= 1");
        if (ackIntervalMs < 0) throw new IllegalArgumentException("ackIntervalMs must be >= 0");
    }

    /** The first seven limits; the rest at their defaults (the idle timeout three heartbeats). */
    public RealtimeSettings(int maxMessageBytes, long heartbeatMs, int maxDeltaBytes, boolean presenceEnabled,
                            int maxPresenceBytes, long outboxMaxBytes, int outboxMaxMessages) {
        this(maxMessageBytes, heartbeatMs, maxDeltaBytes, presenceEnabled, maxPresenceBytes, outboxMaxBytes,
                outboxMaxMessages, DEFAULT_IDLE_HEARTBEATS * heartbeatMs, 4L * 1024 * 1024, 60_000, 10_000, 0, 20,
                1_000);
    }

    public RealtimeSettings withMaxDeltaBytes(int bytes) {
        return new RealtimeSettings(maxMessageBytes, heartbeatMs, bytes, presenceEnabled, maxPresenceBytes,
                outboxMaxBytes, outboxMaxMessages, idleTimeoutMs, maxRoundBytes, roundTimeoutMs, maxConnections,
                maxConnectionsPerActor, presencePerSecond, ackIntervalMs);
    }

    public RealtimeSettings withMaxPresenceBytes(int bytes) {
        return new RealtimeSettings(maxMessageBytes, heartbeatMs, maxDeltaBytes, presenceEnabled, bytes,
                outboxMaxBytes, outboxMaxMessages, idleTimeoutMs, maxRoundBytes, roundTimeoutMs, maxConnections,
                maxConnectionsPerActor, presencePerSecond, ackIntervalMs);
    }

    /** The hardening limits (tests and the configuration reader). */
    public RealtimeSettings withHardening(long idleTimeout, long maxRound, long roundTimeout, int connections,
                                          int perActor, int presenceRate, long ackInterval) {
        return new RealtimeSettings(maxMessageBytes, heartbeatMs, maxDeltaBytes, presenceEnabled, maxPresenceBytes,
                outboxMaxBytes, outboxMaxMessages, idleTimeout, maxRound, roundTimeout, connections, perActor,
                presenceRate, ackInterval);
    }
}

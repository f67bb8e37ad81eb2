package syncular.jakarta.realtime;

/**
 * Realtime limits ({@code syncular.realtime.*}).
 *
 * @param maxMessageBytes    the largest inbound message a session accepts (applied per session at open)
 * @param heartbeatMs        §8.5 heartbeat period
 * @param maxDeltaBytes      §8.2: a larger delta becomes a {@code delta-too-large} wake-up
 * @param presenceEnabled    §8.6 on/off; off ignores publishes (no fanout, no error)
 * @param maxPresenceBytes   §8.6.2 document size cap ({@code JSON.stringify} length)
 * @param outboxMaxBytes     deltas queued for one socket beyond this are dropped for a {@code catchup-required} wake
 * @param outboxMaxMessages  control messages queued beyond this close the socket as a slow consumer
 */
public record RealtimeSettings(int maxMessageBytes, long heartbeatMs, int maxDeltaBytes, boolean presenceEnabled,
                               int maxPresenceBytes, long outboxMaxBytes, int outboxMaxMessages) {
    public static final RealtimeSettings DEFAULTS =
            new RealtimeSettings(4 * 1024 * 1024, 30_000, 1024 * 1024, true, 16 * 1024, 4L * 1024 * 1024, 1024);

    public RealtimeSettings {
        if (maxMessageBytes < 64) throw new IllegalArgumentException("maxMessageBytes must be >= 64");
        if (heartbeatMs < 1) throw new IllegalArgumentException("heartbeatMs must be >= 1");
        if (maxDeltaBytes < 1) throw new IllegalArgumentException("maxDeltaBytes must be >= 1");
        if (maxPresenceBytes < 1) throw new IllegalArgumentException("maxPresenceBytes must be >= 1");
        if (outboxMaxBytes < 1) throw new IllegalArgumentException("outboxMaxBytes must be >= 1");
        if (outboxMaxMessages < 1) throw new IllegalArgumentException("outboxMaxMessages must be >= 1");
    }

    public RealtimeSettings withMaxDeltaBytes(int bytes) {
        return new RealtimeSettings(maxMessageBytes, heartbeatMs, bytes, presenceEnabled, maxPresenceBytes,
                outboxMaxBytes, outboxMaxMessages);
    }

    public RealtimeSettings withMaxPresenceBytes(int bytes) {
        return new RealtimeSettings(maxMessageBytes, heartbeatMs, maxDeltaBytes, presenceEnabled, bytes,
                outboxMaxBytes, outboxMaxMessages);
    }
}

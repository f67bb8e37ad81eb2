package syncular.jakarta.wire;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Realtime JSON control messages (SPEC §8): parsing with validation, and rendering. Server → client messages carry
 * {@code event} (hello §8.1, sync wake-up §8.3, heartbeat §8.5, presence fanout/error §8.6.2); client → server carry
 * {@code type} (ack §8.2) or {@code event: "presence"} (publish/leave §8.6.2). An unknown event name is tolerated
 * ({@link Optional#empty()}); a known event with missing or wrong-shaped data is malformed, a
 * {@link DecodeException} ({@code sync.invalid_request}). Every number must be an integer within ±(2^53−1), judged as
 * the JavaScript number it parses to (so {@code 57.0} is 57, {@code 57.5} is malformed). Binary channel tags
 * ({@link #TAG_DELTA}, {@link #TAG_ROUND}) are §8.7's.
 */
public final class RealtimeControl {
    /** §8.7: a standalone SSP2 response (a delta), server → client. */
    public static final int TAG_DELTA = 0x00;
    /** §8.7: a chunk of the in-flight sync round, either way. */
    public static final int TAG_ROUND = 0x01;
    /** §8.1 hello.protocolVersion. */
    public static final int PROTOCOL_VERSION = 1;

    private RealtimeControl() { }

    /** One control message. */
    public sealed interface Message permits Hello, SyncWake, Heartbeat, PresencePublish, PresenceFanout, PresenceError, Ack {
        /** The message as a JSON tree ({@link Json#write}). */
        Map<String, Object> toJsonValue();

        /** The message as JSON text, strings escaped like {@code JSON.stringify}. */
        default String toJson() { return Json.write(toJsonValue()); }
    }

    /** §8.1 server → client on connect. */
    public record Hello(long protocolVersion, String sessionId, String actorId, String clientId, long cursor,
            long latestCursor, boolean requiresSync, long timestamp) implements Message {
        public Hello {
            Checks.nonNull(sessionId, "hello.sessionId");
            Checks.nonNull(actorId, "hello.actorId");
            Checks.nonNull(clientId, "hello.clientId");
            Checks.safe(protocolVersion, "hello.protocolVersion");
            Checks.safe(cursor, "hello.cursor");
            Checks.safe(latestCursor, "hello.latestCursor");
            Checks.safe(timestamp, "hello.timestamp");
        }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("protocolVersion", protocolVersion);
            d.put("sessionId", sessionId);
            d.put("actorId", actorId);
            d.put("clientId", clientId);
            d.put("cursor", cursor);
            d.put("latestCursor", latestCursor);
            d.put("requiresSync", requiresSync);
            d.put("timestamp", timestamp);
            return event("hello", d);
        }
    }

    /** §8.3 wake-up reasons, a closed set. */
    public enum WakeReason {
        DELTA_TOO_LARGE("delta-too-large"), CATCHUP_REQUIRED("catchup-required"), RESET_REQUIRED("reset-required");

        private final String wire;

        WakeReason(String wire) { this.wire = wire; }

        public String wire() { return wire; }

        static WakeReason forWire(String s) {
            for (WakeReason r : values()) if (r.wire.equals(s)) return r;
            return null;
        }
    }

    /** §8.3 {@code sync} wake-up; {@code requiresPull} is literally true and so not a component. */
    public record SyncWake(long cursor, WakeReason reason, long timestamp) implements Message {
        public SyncWake {
            Checks.safe(cursor, "sync.cursor");
            Checks.safe(timestamp, "sync.timestamp");
            if (reason == null) throw new IllegalArgumentException("sync.reason is required");
        }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("cursor", cursor);
            d.put("requiresPull", true);
            d.put("reason", reason.wire());
            d.put("timestamp", timestamp);
            return event("sync", d);
        }
    }

    /** §8.5. */
    public record Heartbeat(long timestamp) implements Message {
        public Heartbeat { Checks.safe(timestamp, "heartbeat.timestamp"); }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("timestamp", timestamp);
            return event("heartbeat", d);
        }
    }

    /** §8.6.2 client → server publish; {@code doc} null = leave. */
    public record PresencePublish(String scopeKey, Map<String, Object> doc) implements Message {
        public PresencePublish {
            Checks.nonEmpty(scopeKey, "presence.scopeKey");
            if (doc != null) doc = Collections.unmodifiableMap(new LinkedHashMap<>(doc));
        }

        public boolean isLeave() { return doc == null; }

        /** The doc's {@code JSON.stringify} text, whose length the size cap limits (§8.6.2). */
        public String docJson() { return doc == null ? "null" : Json.write(doc); }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("scopeKey", scopeKey);
            d.put("doc", doc);
            return event("presence", d);
        }
    }

    /** §8.6.2 presence fanout kinds, a closed set. */
    public enum PresenceKind {
        JOIN("join"), UPDATE("update"), LEAVE("leave");

        private final String wire;

        PresenceKind(String wire) { this.wire = wire; }

        public String wire() { return wire; }

        static PresenceKind forWire(String s) {
            for (PresenceKind k : values()) if (k.wire.equals(s)) return k;
            return null;
        }
    }

    /** §8.6.2 server → client fanout to other connections on the key; doc null iff leave. */
    public record PresenceFanout(String scopeKey, PresenceKind kind, String actorId, String clientId,
            Map<String, Object> doc, Long timestamp) implements Message {
        public PresenceFanout {
            Checks.nonEmpty(scopeKey, "presence.scopeKey");
            if (kind == null) throw new IllegalArgumentException("presence.kind is required");
            Checks.nonNull(actorId, "presence.actorId");
            Checks.nonNull(clientId, "presence.clientId");
            if ((doc == null) != (kind == PresenceKind.LEAVE)) throw new IllegalArgumentException("presence.doc must be null iff leave");
            if (doc != null) doc = Collections.unmodifiableMap(new LinkedHashMap<>(doc));
            Checks.safe(timestamp, "presence.timestamp");
        }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("scopeKey", scopeKey);
            d.put("kind", kind.wire());
            d.put("actorId", actorId);
            d.put("clientId", clientId);
            d.put("doc", doc);
            if (timestamp != null) d.put("timestamp", timestamp);
            return event("presence", d);
        }
    }

    /** §8.6.2 publisher-only error ({@code presence.too_large}, {@code presence.forbidden}); state unchanged. */
    public record PresenceError(String scopeKey, String error, Long timestamp) implements Message {
        public static final String TOO_LARGE = "presence.too_large";
        public static final String FORBIDDEN = "presence.forbidden";

        public PresenceError {
            Checks.nonEmpty(scopeKey, "presence.scopeKey");
            Checks.nonNull(error, "presence.error");
            Checks.safe(timestamp, "presence.timestamp");
        }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("scopeKey", scopeKey);
            d.put("error", error);
            if (timestamp != null) d.put("timestamp", timestamp);
            return event("presence", d);
        }
    }

    /** §8.2 client → server acknowledgement. */
    public record Ack(long cursor) implements Message {
        public Ack { Checks.safe(cursor, "ack.cursor"); }

        @Override public Map<String, Object> toJsonValue() {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("type", "ack");
            o.put("cursor", cursor);
            return o;
        }
    }

    private static Map<String, Object> event(String name, Map<String, Object> data) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("event", name);
        o.put("data", data);
        return o;
    }

    // ------------------------------------------------------------------ parsing

    /**
     * Parses any control message, either direction. A presence event is a fanout if its data has {@code kind}, an
     * error if it has {@code error}, else a publish (as the reference parser decides). An unknown {@code event} name
     * is {@link Optional#empty()}; an object with neither a string {@code event} nor {@code type: "ack"} is malformed.
     * Unknown members of {@code data} are not kept (the reference client carries presence data through verbatim).
     */
    public static Optional<Message> parse(String text) {
        Map<?, ?> root = object(parseJson(text), "control message");
        if (root.containsKey("event")) {
            String event = string(root.get("event"), "event");
            switch (event) {
                case "hello": return Optional.of(hello(object(root.get("data"), "hello.data")));
                case "sync": return Optional.of(wake(object(root.get("data"), "sync.data")));
                case "heartbeat": {
                    Map<?, ?> d = object(root.get("data"), "heartbeat.data");
                    return Optional.of(new Heartbeat(integer(d.get("timestamp"), "heartbeat.data.timestamp")));
                }
                case "presence": return Optional.of(presence(object(root.get("data"), "presence.data")));
                default: return Optional.empty();
            }
        }
        if ("ack".equals(root.get("type"))) return Optional.of(new Ack(integer(root.get("cursor"), "ack.cursor")));
        // SPEC §8.1: direction is carried by the discriminator; an object with neither is malformed (as the reference
        // client parser has it), while an unknown event *name* is tolerated above
        throw malformed("event must be a string");
    }

    /**
     * Parses what a server receives from a client (§8.2, §8.6.2) with the reference server's tolerance: a presence
     * publish/leave is validated strictly (malformed → {@link DecodeException}, a broken client the server may
     * disconnect); an ack yields {@link Ack} when its cursor is an integer within ±(2^53−1); everything else —
     * unparseable text, non-objects, other events, acks with a bad cursor — is {@link Optional#empty()}, ignored.
     */
    public static Optional<Message> parseClientMessage(String text) {
        Object v;
        try {
            v = Json.parse(text);
        } catch (Json.JsonException e) {
            return Optional.empty();
        }
        if (!(v instanceof Map<?, ?> root)) return Optional.empty();
        if ("presence".equals(root.get("event"))) {
            Map<?, ?> d = object(root.get("data"), "presence.data");
            return Optional.of(publish(d));
        }
        if (!"ack".equals(root.get("type"))) return Optional.empty();
        try {
            return Optional.of(new Ack(integer(root.get("cursor"), "ack.cursor")));
        } catch (DecodeException e) {
            return Optional.empty();
        }
    }

    private static Object parseJson(String text) {
        try {
            return Json.parse(text);
        } catch (Json.JsonException e) {
            throw malformed("not valid JSON");
        }
    }

    private static Hello hello(Map<?, ?> d) {
        return new Hello(integer(d.get("protocolVersion"), "hello.data.protocolVersion"),
                string(d.get("sessionId"), "hello.data.sessionId"), string(d.get("actorId"), "hello.data.actorId"),
                string(d.get("clientId"), "hello.data.clientId"), integer(d.get("cursor"), "hello.data.cursor"),
                integer(d.get("latestCursor"), "hello.data.latestCursor"),
                bool(d.get("requiresSync"), "hello.data.requiresSync"), integer(d.get("timestamp"), "hello.data.timestamp"));
    }

    private static SyncWake wake(Map<?, ?> d) {
        WakeReason reason = WakeReason.forWire(string(d.get("reason"), "sync.data.reason"));
        if (reason == null) throw malformed("sync.data.reason is outside the closed set");
        if (!Boolean.TRUE.equals(d.get("requiresPull"))) throw malformed("sync.data.requiresPull must be true");
        return new SyncWake(integer(d.get("cursor"), "sync.data.cursor"), reason, integer(d.get("timestamp"), "sync.data.timestamp"));
    }

    private static Message presence(Map<?, ?> d) {
        String key = scopeKey(d);
        Long ts = d.containsKey("timestamp") ? integer(d.get("timestamp"), "presence.data.timestamp") : null;
        if (d.containsKey("error")) {
            return new PresenceError(key, string(d.get("error"), "presence.data.error"), ts);
        }
        if (d.containsKey("kind")) {
            PresenceKind kind = PresenceKind.forWire(string(d.get("kind"), "presence.data.kind"));
            if (kind == null) throw malformed("presence.data.kind is outside join|update|leave");
            String actor = string(d.get("actorId"), "presence.data.actorId");
            String client = string(d.get("clientId"), "presence.data.clientId");
            Map<String, Object> doc;
            if (kind == PresenceKind.LEAVE) {
                if (d.get("doc") != null) throw malformed("presence leave must carry doc: null");
                doc = null;
            } else {
                doc = docObject(d.get("doc"));
            }
            return new PresenceFanout(key, kind, actor, client, doc, ts);
        }
        return publish(d);
    }

    private static PresencePublish publish(Map<?, ?> d) {
        String key = scopeKey(d);
        // §8.6.2: doc is an object or null (leave); absent or a scalar is malformed
        if (!d.containsKey("doc")) throw malformed("presence.data.doc must be a JSON object or null");
        Object doc = d.get("doc");
        return new PresencePublish(key, doc == null ? null : docObject(doc));
    }

    private static String scopeKey(Map<?, ?> d) {
        String key = string(d.get("scopeKey"), "presence.data.scopeKey");
        if (key.isEmpty()) throw malformed("presence.data.scopeKey must be non-empty");
        return key;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> docObject(Object v) {
        if (!(v instanceof Map)) throw malformed("presence.data.doc must be a JSON object");
        return (Map<String, Object>) v;
    }

    private static Map<?, ?> object(Object v, String what) {
        if (!(v instanceof Map<?, ?> m)) throw malformed(what + " must be a JSON object");
        return m;
    }

    private static String string(Object v, String what) {
        if (!(v instanceof String s)) throw malformed(what + " must be a string");
        return s;
    }

    private static boolean bool(Object v, String what) {
        if (!(v instanceof Boolean b)) throw malformed(what + " must be a boolean");
        return b;
    }

    /** SPEC §8.1: an integer within ±(2^53−1), as the JavaScript number the text parses to. */
    private static long integer(Object v, String what) {
        if (v instanceof BigDecimal || v instanceof Double) {
            double d = ((Number) v).doubleValue();
            if (d == Math.rint(d) && Math.abs(d) <= WireReader.MAX_SAFE) return (long) d;
        }
        throw malformed(what + " must be an integer within ±(2^53−1)");
    }

    private static DecodeException malformed(String what) {
        return DecodeException.invalid("malformed realtime control message (SPEC §8.1): " + what);
    }
}

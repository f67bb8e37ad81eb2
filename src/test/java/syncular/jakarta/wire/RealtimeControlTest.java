package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Realtime control messages (SPEC §8.1–§8.6). */
class RealtimeControlTest {
    @Test @Spec("§8.1")
    void unknownEventsAreToleratedKnownOnesValidated() {
        assertTrue(RealtimeControl.parse("{\"event\":\"future-thing\",\"data\":7}").isEmpty());
        assertThrows(DecodeException.class, () -> RealtimeControl.parse("{\"other\":1}"));
        assertThrows(DecodeException.class, () -> RealtimeControl.parse("{\"event\":\"heartbeat\"}"));
        assertThrows(DecodeException.class, () -> RealtimeControl.parse("[1]"));
        assertThrows(DecodeException.class, () -> RealtimeControl.parse("{\"event\":\"heartbeat\",\"data\":{\"timestamp\":9007199254740992}}"));
        assertEquals(new RealtimeControl.Heartbeat(57),
                RealtimeControl.parse("{\"event\":\"heartbeat\",\"data\":{\"timestamp\":57.0}}").orElseThrow());
    }

    @Test @Spec("§8.2, §8.6.2")
    void clientMessagesAreAcksAndPresencePublishes() {
        assertEquals(new RealtimeControl.Ack(42), RealtimeControl.parseClientMessage("{\"type\":\"ack\",\"cursor\":42}").orElseThrow());
        assertTrue(RealtimeControl.parseClientMessage("{\"type\":\"ack\",\"cursor\":\"42\"}").isEmpty()); // ignored, as the reference server does
        assertTrue(RealtimeControl.parseClientMessage("not json").isEmpty());
        RealtimeControl.PresencePublish leave = (RealtimeControl.PresencePublish) RealtimeControl
                .parseClientMessage("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"doc\":null}}").orElseThrow();
        assertTrue(leave.isLeave());
        assertThrows(DecodeException.class, () -> RealtimeControl.parseClientMessage("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"\",\"doc\":{}}}"));
        assertThrows(DecodeException.class, () -> RealtimeControl.parseClientMessage("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"k\"}}"));
        assertTrue(RealtimeControl.parseClientMessage("{\"event\":\"hello\",\"data\":{}}").isEmpty());
    }

    @Test @Spec("§8.3, §8.6.2")
    void rendersServerEventsAsTheSpecShowsThem() {
        assertEquals("{\"event\":\"sync\",\"data\":{\"cursor\":64,\"requiresPull\":true,\"reason\":\"reset-required\",\"timestamp\":1}}",
                new RealtimeControl.SyncWake(64, RealtimeControl.WakeReason.RESET_REQUIRED, 1).toJson());
        RealtimeControl.PresenceFanout leave = new RealtimeControl.PresenceFanout("project:p1",
                RealtimeControl.PresenceKind.LEAVE, "a", "c", null, 5L);
        assertEquals(leave, RealtimeControl.parse(leave.toJson()).orElseThrow());
        assertThrows(IllegalArgumentException.class, () -> new RealtimeControl.PresenceFanout("k",
                RealtimeControl.PresenceKind.JOIN, "a", "c", null, 5L));
        RealtimeControl.Message err = RealtimeControl.parse(
                new RealtimeControl.PresenceError("k", RealtimeControl.PresenceError.FORBIDDEN, 3L).toJson()).orElseThrow();
        assertInstanceOf(RealtimeControl.PresenceError.class, err);
        assertEquals("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"k\",\"doc\":{\"n\":\"\\u0001\"}}}",
                new RealtimeControl.PresencePublish("k", Map.of("n", "\u0001")).toJson());
    }
}

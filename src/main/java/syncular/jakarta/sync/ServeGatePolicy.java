package syncular.jakarta.sync;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.ServeGateRefusal;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The RFC 0007 serve gate as the protocol sees it (seeds/001 {@code serveGateRefusal}, seeds/002 handler.js): a
 * refusal becomes 503 {@code sync.schema_not_ready} with details {@code {storedSchemaVersion,
 * runningSchemaVersion}}, {@code {partition, projection}} or {@code {}} (the token changed between two reads).
 */
public final class ServeGatePolicy {
    private ServeGatePolicy() { }

    /** Refuses (throws) unless the gate lets this process serve. */
    public static void enforce(ServeGate gate, int running, List<CheckpointDeclaration> declarations) {
        gate.refusal(running, declarations).ifPresent(r -> {
            throw refusal(r);
        });
    }

    /** Refuses when the gate now refuses or its token changed since {@code entry} (read-verify-refuse). */
    public static void verifyUnchanged(ServeGate entry, ServeGate now, int running,
                                       List<CheckpointDeclaration> declarations) {
        enforce(now, running, declarations);
        now.changedSince(entry).ifPresent(r -> {
            throw refusal(r);
        });
    }

    public static SyncException refusal(ServeGateRefusal r) {
        Map<String, Object> details = new LinkedHashMap<>();
        String message;
        if (r instanceof ServeGateRefusal.Schema s) {
            details.put("storedSchemaVersion", s.stored());
            details.put("runningSchemaVersion", s.running());
            message = "the database holds a newer schema version than this server runs";
        } else if (r instanceof ServeGateRefusal.Checkpoint c) {
            details.put("partition", c.partition());
            details.put("projection", c.name());
            message = "a projection backfill this server did not declare is not activated yet";
        } else {
            message = "the schema or log epoch changed while the response was built";
        }
        return new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY, message, Json.write(details));
    }
}

package syncular.jakarta.storage;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The RFC 0007 serve-gate token (seeds/001 {@code ServeGate}, UPSTREAM-SERVER §3.5): the stored schema marker (0
 * when absent), the request partition's log epoch (null when unregistered), and every non-activated checkpoint at
 * the running schema version across ALL partitions. Read per request, never memoized.
 */
public record ServeGate(int storedSchemaVersion, String logEpoch, List<PendingCheckpoint> pending) {
    public ServeGate {
        pending = List.copyOf(pending);
    }

    /**
     * The gate predicate, in upstream's order (seeds/001 {@code serveGateRefusal}): a newer database is always
     * refused; then the first pending checkpoint this process did not declare (version not compared; no
     * declarations declare nothing); otherwise serve.
     */
    public Optional<ServeGateRefusal> refusal(int runningSchemaVersion, List<CheckpointDeclaration> declarations) {
        if (storedSchemaVersion > runningSchemaVersion) {
            return Optional.of(new ServeGateRefusal.Schema(storedSchemaVersion, runningSchemaVersion));
        }
        List<CheckpointDeclaration> declared = declarations == null ? List.of() : declarations;
        for (PendingCheckpoint p : pending) {
            boolean ok = declared.stream().anyMatch(d -> d.partition().equals(p.partition())
                    && d.name().equals(p.name()));
            if (!ok) return Optional.of(new ServeGateRefusal.Checkpoint(p.partition(), p.name()));
        }
        return Optional.empty();
    }

    /** seeds/001 {@code serveGateTokenChanged}: the stored version or the epoch moved across a data read. */
    public Optional<ServeGateRefusal> changedSince(ServeGate before) {
        if (before.storedSchemaVersion != storedSchemaVersion || !Objects.equals(before.logEpoch, logEpoch)) {
            return Optional.of(new ServeGateRefusal.Epoch());
        }
        return Optional.empty();
    }
}

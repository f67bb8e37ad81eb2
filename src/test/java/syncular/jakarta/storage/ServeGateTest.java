package syncular.jakarta.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The RFC 0007 gate predicate (seeds/001 {@code serveGateRefusal}, {@code serveGateTokenChanged}). */
class ServeGateTest {
    private static final PendingCheckpoint A = new PendingCheckpoint("p1", "a");
    private static final PendingCheckpoint B = new PendingCheckpoint("p2", "b");

    @Test @Seed("001 serveGateRefusal: a newer database is always refused, first")
    void aNewerDatabaseIsRefusedBeforeAnyCheckpoint() {
        ServeGate gate = new ServeGate(3, "e", List.of(A));
        assertEquals(Optional.of(new ServeGateRefusal.Schema(3, 2)),
                gate.refusal(2, List.of(new CheckpointDeclaration("p1", "a", 3))));
        assertEquals(Optional.empty(), new ServeGate(1, "e", List.of()).refusal(2, List.of()),
                "an older marker is ensureSchema's business, not a refusal");
    }

    @Test @Seed("001 serveGateRefusal: only declared pending checkpoints may be served past")
    void theFirstUndeclaredPendingCheckpointRefuses() {
        ServeGate gate = new ServeGate(2, "e", List.of(A, B));
        assertEquals(Optional.of(new ServeGateRefusal.Checkpoint("p1", "a")), gate.refusal(2, List.of()));
        assertEquals(Optional.of(new ServeGateRefusal.Checkpoint("p1", "a")), gate.refusal(2, null),
                "no declarations declare nothing");
        assertEquals(Optional.of(new ServeGateRefusal.Checkpoint("p2", "b")),
                gate.refusal(2, List.of(new CheckpointDeclaration("p1", "a", 2))));
        assertEquals(Optional.empty(), gate.refusal(2, List.of(new CheckpointDeclaration("p1", "a", 9),
                new CheckpointDeclaration("p2", "b", 1))), "the declaration's version is not compared");
        assertEquals(Optional.of(new ServeGateRefusal.Checkpoint("p1", "a")),
                gate.refusal(2, List.of(new CheckpointDeclaration("p2", "a", 2))), "partition and name both match");
    }

    @Test @Seed("001 serveGateTokenChanged")
    void aChangedMarkerOrEpochIsAnEpochRefusal() {
        ServeGate before = new ServeGate(2, "e1", List.of(A));
        assertEquals(Optional.empty(), new ServeGate(2, "e1", List.of()).changedSince(before),
                "pending is not part of the token");
        assertEquals(Optional.of(new ServeGateRefusal.Epoch()), new ServeGate(3, "e1", List.of()).changedSince(before));
        assertEquals(Optional.of(new ServeGateRefusal.Epoch()), new ServeGate(2, "e2", List.of()).changedSince(before));
        assertEquals(Optional.of(new ServeGateRefusal.Epoch()), new ServeGate(2, null, List.of()).changedSince(before));
    }
}

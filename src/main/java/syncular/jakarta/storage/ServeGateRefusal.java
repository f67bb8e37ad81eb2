package syncular.jakarta.storage;

/** Why the RFC 0007 serve gate refuses (seeds/001 {@code ServeGateRefusal}). */
public sealed interface ServeGateRefusal {
    /** The database is newer than the running build. */
    record Schema(int stored, int running) implements ServeGateRefusal { }

    /** A pending checkpoint this process did not declare. */
    record Checkpoint(String partition, String name) implements ServeGateRefusal { }

    /** The token changed between two reads: a migration or a restore happened in between. */
    record Epoch() implements ServeGateRefusal { }
}

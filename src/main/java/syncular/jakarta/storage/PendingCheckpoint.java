package syncular.jakarta.storage;

/** A non-activated checkpoint at the running schema version, in some partition (serve-gate token member). */
public record PendingCheckpoint(String partition, String name) { }

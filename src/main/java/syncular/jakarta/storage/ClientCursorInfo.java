package syncular.jakarta.storage;

/** A client's cursor and when it was last written: the retention input of SPEC §4.6. */
public record ClientCursorInfo(String clientId, long cursor, long updatedAtMs) { }

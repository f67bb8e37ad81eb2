package syncular.jakarta.storage;

/**
 * The operator audit trail (issue 20): every console action, who took it, when, on what and how it ended, kept in
 * the database so it outlives the node that served it. Append-only.
 */
public interface AuditLog {
    /** One operator action as it ended. {@code partition} empty for node-wide actions. */
    record Entry(long atMs, String operator, String action, String partition, String target, String outcome,
                 String detail) { }

    void record(Entry entry);
}

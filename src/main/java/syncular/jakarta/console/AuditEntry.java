package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One audited operator action ({@code sync_operator_actions}, written by {@code storage.AuditLog}). */
@Entity
@Table(name = "sync_operator_actions")
public class AuditEntry {
    @Id
    @Column(name = "id")
    private long id;
    @Column(name = "at_ms")
    private long atMs;
    @Column(name = "operator")
    private String operator;
    @Column(name = "action")
    private String action;
    @Column(name = "partition")
    private String partition;
    @Column(name = "target")
    private String target;
    @Column(name = "outcome")
    private String outcome;
    @Column(name = "detail")
    private String detail;

    public long id() { return id; }

    public long atMs() { return atMs; }

    public String operator() { return operator; }

    public String action() { return action; }

    public String partition() { return partition; }

    public String target() { return target; }

    public String outcome() { return outcome; }

    public String detail() { return detail; }
}

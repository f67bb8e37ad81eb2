package syncular.jakarta.storage.postgres;

import java.sql.PreparedStatement;
import java.util.List;
import javax.sql.DataSource;
import syncular.jakarta.storage.AuditLog;

/**
 * The audit trail in {@code sync_operator_actions}, on a connection of its own in autocommit: an action's record
 * commits whether or not the action's own transaction did (a failed prune is audited as failed). The console reads
 * it back through JPA ({@code console.AuditEntry}).
 */
public final class PostgresAuditLog implements AuditLog {
    static final List<String> DDL = List.of("""
            CREATE TABLE IF NOT EXISTS sync_operator_actions(
              id BIGSERIAL PRIMARY KEY,
              at_ms BIGINT NOT NULL, operator TEXT NOT NULL, action TEXT NOT NULL,
              partition TEXT NOT NULL, target TEXT NOT NULL, outcome TEXT NOT NULL, detail TEXT
            )""", """
            CREATE INDEX IF NOT EXISTS sync_operator_actions_by_time ON sync_operator_actions(at_ms)""");

    private final OwnTables tables;

    public PostgresAuditLog(DataSource dataSource) { this.tables = new OwnTables(dataSource, DDL); }

    /** Creates the table if absent (at start, so concurrent first actions never race on DDL). */
    public void install() { tables.install(); }

    @Override
    public void record(Entry e) {
        tables.run(c -> {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO sync_operator_actions"
                    + "(at_ms, operator, action, partition, target, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
                ps.setLong(1, e.atMs());
                ps.setString(2, e.operator());
                ps.setString(3, e.action());
                ps.setString(4, e.partition());
                ps.setString(5, e.target());
                ps.setString(6, e.outcome());
                ps.setString(7, e.detail());
                ps.executeUpdate();
            }
            return null;
        });
    }
}

package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import syncular.jakarta.storage.StoredCheckpoint;

/**
 * Tests' declaration of ONE checkpoint, exactly as a migration's {@code ensureSchema} declares each of its
 * (seeds/003 {@code declareCheckpoint}): the row and the fence that protects it in one transaction, never
 * re-declaring a row nor lowering a fence; answers the row as stored. Production declares through
 * {@code ensureSchema} only.
 */
public final class PostgresCheckpoints {
    private PostgresCheckpoints() { }

    public static StoredCheckpoint declare(DataSource db, String partition, String name, int schemaVersion,
                                           long nowMs) {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            PostgresServerStorage.installCheckpointOn(c, partition, name, schemaVersion, nowMs);
            try (PreparedStatement ps = c.prepareStatement("SELECT " + CommitLogSql.CHECKPOINT_COLUMNS
                    + " FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?")) {
                ps.setString(1, partition);
                ps.setString(2, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) throw new IllegalStateException("the declared checkpoint is not there");
                    StoredCheckpoint cp = CommitLogSql.checkpoint(rs, 1);
                    c.commit();
                    return cp;
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredRow;

/**
 * What only the conformance host needs from PostgreSQL (SPEC-DIGEST §15 ServerDriver: reset, readRows): wiping every
 * piece of sync state, and listing a table's stored rows. Never used by the serve path. Not part of the storage
 * contract on purpose: a production server has no business dropping its tables.
 */
public final class PostgresConformanceSupport {
    private final DataSource dataSource;

    public PostgresConformanceSupport(DataSource dataSource) { this.dataSource = dataSource; }

    /**
     * Drops every projection table (recognised by its internal partition column) and every storage table and the
     * fence function, in one transaction run by {@code runner}; the next {@code ensureSchema} starts from nothing.
     */
    public void wipe(syncular.jakarta.storage.TransactionRunner runner) {
        runner.inNewTransaction(c -> {
            List<String> tables = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT DISTINCT table_name FROM information_schema.columns"
                    + " WHERE table_schema = current_schema() AND column_name = ?")) {
                ps.setString(1, RowTable.PARTITION);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) tables.add(rs.getString(1));
                }
            }
            tables.addAll(PostgresDdl.TABLES);
            tables.add("sync_segments");
            tables.add("sync_segment_publications");
            try (Statement s = c.createStatement()) {
                for (String t : tables) s.execute("DROP TABLE IF EXISTS " + RowTable.quoteIdent(t) + " CASCADE");
                s.execute("DROP FUNCTION IF EXISTS syncular_writer_fence() CASCADE");
            }
            return null;
        });
    }

    /** Every stored row of a table in a partition, ordered by row id in byte order. */
    public List<StoredRow> rows(String partition, String table) {
        String sql = "SELECT " + RowTable.quoteIdent(RowTable.ROW_ID) + ", " + RowTable.quoteIdent(RowTable.VERSION) + ", "
                + RowTable.quoteIdent(RowTable.SCOPES) + "::text, " + RowTable.quoteIdent(RowTable.PAYLOAD) + " FROM " + RowTable.quoteIdent(table)
                + " WHERE " + RowTable.quoteIdent(RowTable.PARTITION) + " = ? ORDER BY " + RowTable.quoteIdent(RowTable.ROW_ID);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, partition);
            List<StoredRow> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new StoredRow(rs.getString(1), rs.getLong(2), StoredJson.parseScopes(rs.getString(3)),
                            rs.getBytes(4)));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }
}

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
 * What only the conformance host needs from PostgreSQL (SPEC-DIGEST §15 ServerDriver: reset, readRows,
 * captureBackup, restoreBackup): wiping every piece of sync state, copying it aside and back, and listing a table's
 * stored rows. Never used by the serve path. Not part of the storage
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
            try (Statement s = c.createStatement()) {
                for (String t : stateTables(c)) {
                    s.execute("DROP TABLE IF EXISTS " + RowTable.quoteIdent(t) + " CASCADE");
                }
                s.execute("DROP FUNCTION IF EXISTS syncular_writer_fence() CASCADE");
                s.execute("DROP SCHEMA IF EXISTS " + BACKUP + " CASCADE");
            }
            return null;
        });
    }

    private static final String HOST_STATE = "CREATE TABLE IF NOT EXISTS syncular_conformance_host("
            + "id SMALLINT PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)";

    /**
     * The conformance host's control-plane state, one JSON document, replaced in one statement (autocommit). Outside
     * {@link #wipe}: a reset replaces it rather than losing it.
     */
    public void saveHostState(String json) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             PreparedStatement ps = c.prepareStatement("INSERT INTO syncular_conformance_host(id, state) VALUES (1, ?)"
                     + " ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state")) {
            s.execute(HOST_STATE);
            ps.setString(1, json);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }

    /** The state {@link #saveHostState} last wrote in this database, if any. */
    public java.util.Optional<String> loadHostState() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(HOST_STATE);
            try (ResultSet rs = s.executeQuery("SELECT state FROM syncular_conformance_host WHERE id = 1")) {
                return rs.next() ? java.util.Optional.of(rs.getString(1)) : java.util.Optional.empty();
            }
        } catch (SQLException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }

    /** Where {@link #captureBackup} keeps its copy: a schema of this database, dropped by {@link #wipe}. */
    private static final String BACKUP = "syncular_conformance_backup";

    /**
     * The catalog's {@code captureBackup}: a copy of every sync table as it is now, in one transaction (a
     * consistent snapshot, as a dump is), replacing any earlier copy.
     */
    public void captureBackup(syncular.jakarta.storage.TransactionRunner runner) {
        runner.inNewTransaction(c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                List<String> tables = existing(c, stateTables(c));
                s.execute("DROP SCHEMA IF EXISTS " + BACKUP + " CASCADE");
                s.execute("CREATE SCHEMA " + BACKUP);
                for (String t : tables) {
                    s.execute("CREATE TABLE " + BACKUP + "." + RowTable.quoteIdent(t) + " AS TABLE "
                            + RowTable.quoteIdent(t));
                }
            }
            return null;
        });
    }

    /**
     * The catalog's {@code restoreBackup}, the database half: every sync table gets back exactly the rows of the
     * copy, in one transaction; tables the copy lacks (created after it) are emptied. The server half, the log-epoch
     * rotation, is the caller's (SPEC §2.1).
     */
    public void restoreBackup(syncular.jakarta.storage.TransactionRunner runner) {
        runner.inNewTransaction(c -> {
            List<String> saved = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT table_name FROM information_schema.tables"
                    + " WHERE table_schema = ?")) {
                ps.setString(1, BACKUP);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) saved.add(rs.getString(1));
                }
            }
            if (saved.isEmpty()) {
                throw new StorageException(StorageErrorCode.UNCLASSIFIED,
                        java.util.Map.of("reason", "no backup was captured since the last reset"));
            }
            List<String> live = existing(c, stateTables(c));
            // segments before the publications that reference them
            live.sort(java.util.Comparator.comparing(t -> t.equals("sync_segment_publications")));
            try (Statement s = c.createStatement()) {
                s.execute("TRUNCATE " + String.join(", ", live.stream().map(RowTable::quoteIdent).toList()));
                for (String t : live) {
                    if (!saved.contains(t)) continue;
                    String columns = String.join(", ", columns(c, BACKUP, t).stream().map(RowTable::quoteIdent)
                            .toList());
                    s.execute("INSERT INTO " + RowTable.quoteIdent(t) + " (" + columns + ") SELECT " + columns
                            + " FROM " + BACKUP + "." + RowTable.quoteIdent(t));
                }
            }
            return null;
        });
    }

    /** Every table that holds sync state: the projections (by their internal partition column) and the storage's. */
    private static List<String> stateTables(Connection c) throws SQLException {
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
        tables.add("sync_leases");
        // parents first: a restore inserts in this order, and the chunks and blobs hang off their upload
        tables.add("sync_blob_uploads");
        tables.add("sync_blobs");
        tables.add("sync_blob_chunks");
        return tables;
    }

    private static List<String> existing(Connection c, List<String> tables) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(quote_ident(?)) IS NOT NULL")) {
            for (String t : tables) {
                ps.setString(1, t);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && rs.getBoolean(1) && !out.contains(t)) out.add(t);
                }
            }
        }
        return out;
    }

    private static List<String> columns(Connection c, String schema, String table) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT column_name FROM information_schema.columns"
                + " WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position")) {
            ps.setString(1, schema);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1));
            }
        }
        return out;
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

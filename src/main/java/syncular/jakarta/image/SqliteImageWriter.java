package syncular.jakarta.image;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import org.sqlite.SQLiteConfig;
import org.sqlite.jdbc4.JDBC4Connection;
import syncular.jakarta.wire.ColumnDescriptor;

/**
 * Writes one SPEC §5.3 SQLite segment: a database file with exactly two tables, the data table (named as the target
 * table: the schema's columns in declaration order, §2.4 type affinities, NOT NULL where the column is not nullable,
 * the primary-key column PRIMARY KEY, then {@code _syncular_version INTEGER NOT NULL}) and {@code _syncular_segment},
 * whose one row repeats the descriptor. Cells: booleans as 0/1, json as its verbatim text, NULL for null.
 *
 * <p>Rows go into a temporary file inside one SQLite transaction (no journal, no syncs: the file is scratch until
 * {@link #finish} reads it), a thousand per native call, so building holds no more than SQLite's page cache and one
 * batch in memory whatever the table's size; a row SQLite refuses (a duplicate key) fails the batch that holds it.
 * The connection is opened directly, never through {@code DriverManager}. Not thread-safe: one writer per image.
 */
public final class SqliteImageWriter implements AutoCloseable {
    /** The §5.6 version column inside an image. */
    public static final String VERSION_COLUMN = "_syncular_version";
    /** The §5.3 metadata table. */
    public static final String METADATA_TABLE = "_syncular_segment";
    /** The one image format this server writes (§5.3). */
    public static final int FORMAT = 1;

    private final Path file;
    private final String table;
    private final List<ColumnDescriptor> columns;
    private final Connection connection;
    private final PreparedStatement insert;
    /** Rows bound before the driver inserts them in one native call (one JNI crossing, not one per value). */
    static final int BATCH_ROWS = 1_000;

    private long rows;
    private int batched;
    private boolean finished;

    /**
     * Opens a new image in a fresh file under {@code directory}. {@code primaryKey} names one of {@code columns}.
     *
     * @throws ImageException when the file or the database cannot be created (disk, the native library)
     */
    public SqliteImageWriter(Path directory, String table, List<ColumnDescriptor> columns, String primaryKey) {
        this.table = table;
        this.columns = List.copyOf(columns);
        Path created = null;
        Connection opened = null;
        try {
            created = Files.createTempFile(directory, "syncular-image-", ".sqlite");
            SQLiteConfig config = new SQLiteConfig();
            config.setJournalMode(SQLiteConfig.JournalMode.OFF);
            config.setSynchronous(SQLiteConfig.SynchronousMode.OFF);
            config.setTempStore(SQLiteConfig.TempStore.MEMORY);
            opened = new JDBC4Connection("jdbc:sqlite:" + created, created.toString(), config.toProperties());
            try (Statement s = opened.createStatement()) {
                s.executeUpdate(createDataTable(table, this.columns, primaryKey));
                s.executeUpdate("CREATE TABLE " + METADATA_TABLE + " (format INTEGER NOT NULL, \"table\" TEXT NOT NULL,"
                        + " \"schemaVersion\" INTEGER NOT NULL, \"asOfCommitSeq\" INTEGER NOT NULL,"
                        + " \"scopeDigest\" TEXT NOT NULL, \"rowCount\" INTEGER NOT NULL)");
            }
            opened.setAutoCommit(false);
            this.insert = opened.prepareStatement(insertRow(table, this.columns));
        } catch (IOException | SQLException | RuntimeException | LinkageError e) {
            closeQuietly(opened);
            deleteQuietly(created);
            throw new ImageException("cannot create a SQLite image of table " + table, e);
        }
        this.file = created;
        this.connection = opened;
    }

    /** Appends one row: {@code values} in column order as the row codec decodes them, and its server version. */
    public void add(long serverVersion, Object[] values) {
        if (values.length != columns.size()) {
            throw new IllegalArgumentException("a row of " + values.length + " values for " + columns.size()
                    + " columns");
        }
        try {
            for (int i = 0; i < values.length; i++) bind(insert, i + 1, values[i]);
            insert.setLong(values.length + 1, serverVersion);
            insert.addBatch();
            rows++;
            if (++batched == BATCH_ROWS) flush();
        } catch (SQLException e) {
            throw new ImageException("cannot write a row into the SQLite image of table " + table, e);
        }
    }

    public long rowCount() { return rows; }

    private void flush() throws SQLException {
        if (batched == 0) return;
        batched = 0;
        insert.executeBatch();
    }

    /** Writes the metadata row, commits, closes the database and returns the file's bytes; the file is deleted. */
    public byte[] finish(int schemaVersion, long asOfCommitSeq, String scopeDigest) {
        if (finished) throw new IllegalStateException("the image is already finished");
        finished = true;
        try {
            flush();
            try (PreparedStatement meta = connection.prepareStatement(
                    "INSERT INTO " + METADATA_TABLE + " VALUES (?, ?, ?, ?, ?, ?)")) {
                meta.setInt(1, FORMAT);
                meta.setString(2, table);
                meta.setInt(3, schemaVersion);
                meta.setLong(4, asOfCommitSeq);
                meta.setString(5, scopeDigest);
                meta.setLong(6, rows);
                meta.executeUpdate();
            }
            connection.commit();
            insert.close();
            connection.close();
            return Files.readAllBytes(file);
        } catch (SQLException e) {
            throw new ImageException("cannot finish the SQLite image of table " + table, e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            close();
        }
    }

    /** Abandons an unfinished image (or cleans up after {@link #finish}): the file is deleted. */
    @Override
    public void close() {
        closeQuietly(connection);
        deleteQuietly(file);
    }

    /** A §2.4-typed value into a SQLite cell (§5.3 cell encodings). */
    private static void bind(PreparedStatement ps, int index, Object value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.NULL);
        } else if (value instanceof String s) {
            ps.setString(index, s);
        } else if (value instanceof Long l) {
            ps.setLong(index, l);
        } else if (value instanceof Double d) {
            ps.setDouble(index, d);
        } else if (value instanceof Boolean b) {
            ps.setInt(index, b ? 1 : 0);
        } else if (value instanceof byte[] bytes) {
            ps.setBytes(index, bytes);
        } else {
            throw new IllegalArgumentException("no SQLite cell for a " + value.getClass().getName());
        }
    }

    static String createDataTable(String table, List<ColumnDescriptor> columns, String primaryKey) {
        List<String> defs = new ArrayList<>();
        for (ColumnDescriptor c : columns) {
            defs.add(quote(c.name()) + " " + affinity(c) + (c.nullable() ? "" : " NOT NULL")
                    + (c.name().equals(primaryKey) ? " PRIMARY KEY" : ""));
        }
        defs.add(quote(VERSION_COLUMN) + " INTEGER NOT NULL");
        return "CREATE TABLE " + quote(table) + " (" + String.join(", ", defs) + ")";
    }

    private static String insertRow(String table, List<ColumnDescriptor> columns) {
        List<String> names = new ArrayList<>();
        for (ColumnDescriptor c : columns) names.add(quote(c.name()));
        names.add(quote(VERSION_COLUMN));
        return "INSERT INTO " + quote(table) + " (" + String.join(", ", names) + ") VALUES ("
                + String.join(", ", java.util.Collections.nCopies(names.size(), "?")) + ")";
    }

    /** §5.3 declared type affinities (blob_ref is text like string; crdt is opaque bytes like bytes). */
    private static String affinity(ColumnDescriptor c) {
        return switch (c.type()) {
            case STRING, JSON, BLOB_REF -> "TEXT";
            case INTEGER, BOOLEAN -> "INTEGER";
            case FLOAT -> "REAL";
            case BYTES, CRDT -> "BLOB";
        };
    }

    private static String quote(String identifier) { return '"' + identifier.replace("\"", "\"\"") + '"'; }

    private static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.close();
        } catch (SQLException ignored) {
            // scratch database: nothing to keep
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) return;
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a temporary file the OS cleans up
        }
    }

    /** Building an image failed for a reason outside the rows (disk, the native library, SQLite itself). */
    public static final class ImageException extends RuntimeException {
        ImageException(String message, Throwable cause) { super(message, cause); }
    }
}

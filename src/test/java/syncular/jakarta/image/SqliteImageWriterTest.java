package syncular.jakarta.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.TestSchemas;

/**
 * The §5.3 file format, read back with the SQLite JDBC driver as a client would open it: exactly two tables, the
 * schema's columns in order with their affinities, NOT NULL and PRIMARY KEY, {@code _syncular_version} last, one
 * metadata row, and every §2.4 type's cell encoding.
 */
class SqliteImageWriterTest {
    private static final TableSchema NOTES = TestSchemas.allTypes(3).table("notes").orElseThrow();

    @TempDir
    Path dir;

    private byte[] build(List<Object[]> rows) {
        try (SqliteImageWriter w = new SqliteImageWriter(dir, "notes", NOTES.descriptors(), NOTES.primaryKey())) {
            long version = 1;
            for (Object[] r : rows) w.add(version++, r);
            return w.finish(3, 42, "sha256:digest");
        }
    }

    private Connection open(byte[] image) throws Exception {
        Path f = Files.write(Files.createTempFile(dir, "read-", ".sqlite"), image);
        return DriverManager.getConnection("jdbc:sqlite:" + f);
    }

    @Test
    void theImageHoldsTheTwoTablesTheSpecNames() throws Exception {
        byte[] image = build(List.of());
        try (Connection c = open(image); Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
                while (rs.next()) tables.add(rs.getString(1));
            }
            assertEquals(List.of("_syncular_segment", "notes"), tables);

            List<String> columns = new ArrayList<>();
            List<String> described = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("PRAGMA table_info(\"notes\")")) {
                while (rs.next()) {
                    columns.add(rs.getString("name"));
                    described.add(rs.getString("name") + " " + rs.getString("type") + " notnull=" + rs.getInt("notnull")
                            + " pk=" + rs.getInt("pk"));
                }
            }
            assertEquals(List.of("id", "org_id", "owner_id", "title", "count", "score", "done", "meta", "blob", "doc",
                    "_syncular_version"), columns, "schema columns in declaration order, the version last");
            assertEquals(List.of("id TEXT notnull=1 pk=1", "org_id TEXT notnull=1 pk=0", "owner_id TEXT notnull=1 pk=0",
                    "title TEXT notnull=0 pk=0", "count INTEGER notnull=0 pk=0", "score REAL notnull=1 pk=0",
                    "done INTEGER notnull=1 pk=0", "meta TEXT notnull=0 pk=0", "blob BLOB notnull=0 pk=0",
                    "doc BLOB notnull=0 pk=0", "_syncular_version INTEGER notnull=1 pk=0"), described);

            try (ResultSet rs = s.executeQuery("SELECT format, \"table\", \"schemaVersion\", \"asOfCommitSeq\","
                    + " \"scopeDigest\", \"rowCount\" FROM _syncular_segment")) {
                rs.next();
                assertEquals(1, rs.getInt(1));
                assertEquals("notes", rs.getString(2));
                assertEquals(3, rs.getInt(3));
                assertEquals(42, rs.getLong(4));
                assertEquals("sha256:digest", rs.getString(5));
                assertEquals(0, rs.getLong(6));
                assertEquals(false, rs.next(), "exactly one metadata row");
            }
        }
    }

    @Test
    void cellsFollowTheSpecsEncodings() throws Exception {
        byte[] image = build(List.of(
                new Object[] {"n1", "o", "u", "naïve 🚀", 9_007_199_254_740_993L, -0.5, true, "{\"a\": [1, 2]}",
                        new byte[] {0, 1, (byte) 0xff}, new byte[] {7}},
                new Object[] {"n2", "o", "u", null, null, 1e300, false, null, null, null}));
        try (Connection c = open(image); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, title, count, score, done, meta, blob, doc, _syncular_version,"
                     + " typeof(done), typeof(count), typeof(score), typeof(blob) FROM notes ORDER BY id")) {
            rs.next();
            assertEquals("naïve 🚀", rs.getString(2));
            assertEquals(9_007_199_254_740_993L, rs.getLong(3), "64-bit integers survive");
            assertEquals(-0.5, rs.getDouble(4));
            assertEquals(1, rs.getInt(5), "true is 1");
            assertEquals("{\"a\": [1, 2]}", rs.getString(6), "json kept verbatim, whitespace included");
            assertArrayEquals(new byte[] {0, 1, (byte) 0xff}, rs.getBytes(7));
            assertArrayEquals(new byte[] {7}, rs.getBytes(8));
            assertEquals(1, rs.getLong(9));
            assertEquals(List.of("integer", "integer", "real", "blob"),
                    List.of(rs.getString(10), rs.getString(11), rs.getString(12), rs.getString(13)));
            rs.next();
            assertNull(rs.getString(2));
            assertNull(rs.getObject(3));
            assertEquals(0, rs.getInt(5), "false is 0");
            assertNull(rs.getString(6));
            assertNull(rs.getBytes(7));
            assertEquals(2, rs.getLong(9));
        }
        try (Connection c = open(image); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT \"rowCount\" FROM _syncular_segment")) {
            rs.next();
            assertEquals(2, rs.getLong(1));
        }
    }

    @Test
    void identifiersAreQuotedAndNoScratchFileOutlivesTheWriter() throws Exception {
        TableSchema odd = TestSchemas.tasksWith(1, "id", """
                {"name": "id", "type": "string", "nullable": false},
                {"name": "project_id", "type": "string", "nullable": false},
                {"name": "say \\"hi\\"", "type": "string", "nullable": true}""", "").table("tasks").orElseThrow();
        byte[] image;
        try (SqliteImageWriter w = new SqliteImageWriter(dir, "tasks", odd.descriptors(), odd.primaryKey())) {
            w.add(5, new Object[] {"t1", "p", "x"});
            image = w.finish(1, 1, "d");
        }
        try (Connection c = open(image); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT \"say \"\"hi\"\"\" FROM tasks")) {
            rs.next();
            assertEquals("x", rs.getString(1));
        }
        SqliteImageWriter abandoned = new SqliteImageWriter(dir, "tasks", odd.descriptors(), odd.primaryKey());
        abandoned.add(1, new Object[] {"t1", "p", null});
        abandoned.close();
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.filter(p -> p.getFileName().toString().startsWith("syncular-image-")).toList(),
                    "finished and abandoned images leave no file behind");
        }
    }

    @Test
    void aRowOfTheWrongWidthIsRefusedAndADuplicateKeyFailsTheImage() {
        try (SqliteImageWriter w = new SqliteImageWriter(dir, "notes", NOTES.descriptors(), NOTES.primaryKey())) {
            assertThrows(IllegalArgumentException.class, () -> w.add(1, new Object[] {"too few"}));
            Object[] row = {"n1", "o", "u", null, null, 0.0, false, null, null, null};
            w.add(1, row);
            w.add(2, row);
            assertThrows(SqliteImageWriter.ImageException.class, () -> w.finish(3, 1, "d"),
                    "one row per primary key: the batch holding the second fails");
        }
    }

    @Test
    void anImageCannotBeBuiltWhereNoFileCanBeCreated() {
        Path missing = dir.resolve("absent");
        assertThrows(SqliteImageWriter.ImageException.class,
                () -> new SqliteImageWriter(missing, "notes", NOTES.descriptors(), NOTES.primaryKey()));
    }
}

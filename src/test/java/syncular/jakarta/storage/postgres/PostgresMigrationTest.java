package syncular.jakarta.storage.postgres;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.Checkpoints;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.wire.RowCodec;

/**
 * ensureSchema across versions (seeds/003): append-only bumps under {@code LOCK TABLE sync_partitions IN EXCLUSIVE
 * MODE}, payload re-encode, refusals that leave the database untouched, same-version layout checks. Each test owns a
 * database, because schema state is what it tests.
 */
class PostgresMigrationTest {
    private static final String ID = "{\"name\": \"id\", \"type\": \"string\", \"nullable\": false}";
    private static final String PROJECT = "{\"name\": \"project_id\", \"type\": \"string\", \"nullable\": false}";
    private static final String TITLE = "{\"name\": \"title\", \"type\": \"string\", \"nullable\": false}";
    private static final String DONE = "{\"name\": \"done\", \"type\": \"boolean\", \"nullable\": false}";
    private static final String V1_COLUMNS = ID + ", " + PROJECT + ", " + TITLE + ", " + DONE;
    private static final CompiledSchema V1 = TestSchemas.tasks(1);
    private static final String LABELS = "{\"name\": \"labels\", \"primaryKey\": \"id\", \"columns\": [" + ID
            + ", " + PROJECT + "], \"scopes\": [{\"pattern\": \"project:{project_id}\"}]}";
    /** V1 plus two appended nullable columns and a new table. */
    private static final CompiledSchema V2 = TestSchemas.tasksWith(2, "id", V1_COLUMNS
            + ", {\"name\": \"note\", \"type\": \"string\", \"nullable\": true}"
            + ", {\"name\": \"rank\", \"type\": \"float\", \"nullable\": true}", LABELS);

    private static PostgresServerStorage node(EmbeddedPostgresSupport.Pool db) {
        return new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 77L);
    }

    private static void seedRows(PostgresServerStorage s, String p, int n) {
        s.inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            List<StoredChange> changes = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                StoredRow r = TestSchemas.taskRow(V1, String.format("r%05d", i), "p" + (i % 3), 1);
                tx.upsertRow("tasks", r, i);
                changes.add(StoredChange.upsert("tasks", r.rowId(), 1, r.scopes(), r.payload()));
            }
            return tx.appendCommit(new NewCommit("c", "seed-" + p, "a", 0, changes));
        });
    }

    private static void awaitUninterrupted(CountDownLatch latch) {
        try {
            if (!latch.await(30, SECONDS)) throw new AssertionError("the test never let the writer go on");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Object scalar(EmbeddedPostgresSupport.Pool db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getObject(1) : null;
        }
    }

    @Test @Seed("003 ensureSchema: an appended column re-encodes every stored payload")
    void anAppendedColumnReencodesEveryStoredPayloadInEveryPartition() throws SQLException {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(V1, List.of());
            seedRows(v1, "pa", 1_100);   // more than one rewrite batch
            seedRows(v1, "pb", 7);
            Map<String, byte[]> before = new java.util.HashMap<>();
            for (StoredRow r : Reads.scan(v1, "pb", new RowScanQuery("tasks", ScopeFilter.of("project_id", "p0", "p1",
                    "p2"), null, 100))) {
                before.put(r.rowId(), r.payload());
            }
            PostgresServerStorage v2 = node(db);
            v2.ensureSchema(V2, List.of());
            assertEquals(1, v2.migrationsApplied());
            assertEquals(2L, scalar(db, "SELECT schema_version FROM sync_schema_meta"));
            var descriptors = V2.table("tasks").orElseThrow().descriptors();
            var old = V1.table("tasks").orElseThrow().descriptors();
            int checked = 0;
            try (Connection c = db.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT _sync_row_id, _sync_payload, note, rank FROM tasks")) {
                while (rs.next()) {
                    Object[] values = RowCodec.decode(descriptors, rs.getBytes(2));   // strict: would throw on v1 bytes
                    assertEquals(rs.getString(1), values[0]);
                    assertNull(values[4]);
                    assertNull(values[5]);
                    assertNull(rs.getString(3));
                    checked++;
                }
            }
            assertEquals(1_107, checked);
            for (Map.Entry<String, byte[]> e : before.entrySet()) {
                Object[] was = RowCodec.decode(old, e.getValue());
                Object[] now = RowCodec.decode(descriptors, Reads.row(v2, "pb", "tasks", e.getKey()).orElseThrow()
                        .payload());
                assertArrayEquals(was, java.util.Arrays.copyOf(now, 4), "the old values survive the re-encode");
            }
            var labels = V2.table("labels").orElseThrow().descriptors();
            v2.inTransaction("pb", tx -> {   // the new table is live in the same bump
                tx.upsertRow("labels", new StoredRow("l1", 1, Map.of("project_id", "p1"),
                        RowCodec.encode(labels, new Object[] {"l1", "p1"})), 0);
                return null;
            });
            assertEquals(1, Reads.scan(v2, "pb", new RowScanQuery("labels", ScopeFilter.of("project_id", "p1"), null, 10))
                    .size());
            node(db).ensureSchema(V2, List.of());   // a restart at the same version: checks pass, nothing migrates
        }
    }

    @Test @Seed("003 ensureSchema: refused changes")
    void nonAppendOnlyChangesAreRefusedAndLeaveTheDatabaseUntouched() throws SQLException {
        String newTable = "{\"name\": \"extra\", \"primaryKey\": \"id\", \"columns\": [" + ID + ", " + PROJECT
                + "], \"scopes\": [{\"pattern\": \"project:{project_id}\"}]}";
        Map<String, CompiledSchema> refused = new java.util.LinkedHashMap<>();
        refused.put("column reordered", TestSchemas.tasksWith(2, "id", ID + ", " + TITLE + ", " + PROJECT + ", " + DONE,
                newTable));
        refused.put("column removed", TestSchemas.tasksWith(2, "id", ID + ", " + PROJECT + ", " + TITLE, newTable));
        refused.put("column retyped", TestSchemas.tasksWith(2, "id", ID + ", " + PROJECT + ", " + TITLE
                + ", {\"name\": \"done\", \"type\": \"integer\", \"nullable\": false}", newTable));
        refused.put("column re-nulled", TestSchemas.tasksWith(2, "id", ID + ", " + PROJECT
                + ", {\"name\": \"title\", \"type\": \"string\", \"nullable\": true}, " + DONE, newTable));
        refused.put("primary key changed", TestSchemas.tasksWith(2, "title", V1_COLUMNS, newTable));
        refused.put("appended NOT NULL", TestSchemas.tasksWith(2, "id", V1_COLUMNS
                + ", {\"name\": \"note\", \"type\": \"string\", \"nullable\": false}", newTable));
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(V1, List.of());
            seedRows(v1, "p", 3);
            String layoutsBefore = (String) scalar(db, "SELECT layouts FROM sync_schema_meta");
            Object payloadsBefore = scalar(db, "SELECT string_agg(encode(_sync_payload, 'hex'), ',' ORDER BY "
                    + "_sync_row_id) FROM tasks");
            for (Map.Entry<String, CompiledSchema> e : refused.entrySet()) {
                PostgresServerStorage v2 = node(db);
                StorageException ex = assertThrows(StorageException.class, () -> v2.ensureSchema(e.getValue(),
                        List.of(new CheckpointDeclaration("p", "cp", 2))), e.getKey());
                assertEquals(StorageErrorCode.MIGRATION_REFUSED, ex.code(), e.getKey());
                assertEquals("tasks", ex.details().get("table"), e.getKey());
                assertTrue(ex.details().containsKey("column"), e.getKey());
                assertFalse(ex.getMessage().contains("tasks"), "no identifiers in the message");
                assertEquals(0, v2.writerVersion());
                assertEquals(1L, scalar(db, "SELECT schema_version FROM sync_schema_meta"), e.getKey());
                assertEquals(layoutsBefore, scalar(db, "SELECT layouts FROM sync_schema_meta"));
                assertNull(scalar(db, "SELECT to_regclass('extra')"), "the new table was not created");
                assertEquals(0L, scalar(db, "SELECT count(*) FROM sync_backfill_checkpoints"), "nothing installed");
                assertEquals(0L, scalar(db, "SELECT count(*) FROM sync_writer_fence"));
                assertEquals(payloadsBefore, scalar(db, "SELECT string_agg(encode(_sync_payload, 'hex'), ',' "
                        + "ORDER BY _sync_row_id) FROM tasks"));
            }
        }
    }

    @Test @Seed("003 ensureSchema: a newer database is refused")
    void anOlderBuildRefusesANewerDatabase() {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            node(db).ensureSchema(V2, List.of());
            StorageException e = assertThrows(StorageException.class, () -> node(db).ensureSchema(V1, List.of()));
            assertEquals(StorageErrorCode.STORED_SCHEMA_NEWER, e.code());
            assertEquals("2", e.details().get("storedSchemaVersion"));
        }
    }

    @Test @Seed("003 assertStoredLayouts: version equality is not layout equality")
    void aSameVersionBuildWithADifferentLayoutIsRefused() {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            node(db).ensureSchema(V1, List.of());
            CompiledSchema otherV1 = TestSchemas.tasksWith(1, "id", ID + ", " + PROJECT
                    + ", {\"name\": \"title\", \"type\": \"string\", \"nullable\": true}, " + DONE, "");
            StorageException e = assertThrows(StorageException.class, () -> node(db).ensureSchema(otherV1, List.of()));
            assertEquals(StorageErrorCode.STORED_LAYOUT_MISMATCH, e.code());
            assertEquals(Map.of("table", "tasks", "column", "title", "reason", "column differs"), e.details());
            StorageException key = assertThrows(StorageException.class, () -> node(db).ensureSchema(
                    TestSchemas.tasksWith(1, "title", V1_COLUMNS, ""), List.of()));
            assertEquals(StorageErrorCode.STORED_LAYOUT_MISMATCH, key.code());
            assertEquals("primary key differs", key.details().get("reason"));
        }
    }

    @Test @Seed("003 assertPhysicalColumns: types, NOT NULL, primary key")
    void aSameVersionDatabaseWhosePhysicalTableDriftedIsRefused() throws SQLException {
        Map<String, String> drifts = new java.util.LinkedHashMap<>();
        drifts.put("ALTER TABLE tasks ALTER COLUMN title DROP NOT NULL", "NOT NULL differs");
        drifts.put("ALTER TABLE tasks ALTER COLUMN done TYPE text", "type differs");
        drifts.put("ALTER TABLE tasks DROP COLUMN _sync_column_versions", "column missing");
        drifts.put("ALTER TABLE tasks DROP CONSTRAINT tasks_pkey", "primary key differs");
        drifts.put("ALTER TABLE tasks ADD COLUMN surprise text NOT NULL DEFAULT 'x'; "
                + "ALTER TABLE tasks ALTER COLUMN surprise DROP DEFAULT", "unexpected NOT NULL column");
        drifts.put("ALTER TABLE tasks ALTER COLUMN _sync_row_id TYPE text COLLATE \"POSIX\"", "collation differs");
        for (Map.Entry<String, String> d : drifts.entrySet()) {
            try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
                node(db).ensureSchema(V1, List.of());
                try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                    s.execute(d.getKey());
                }
                StorageException e = assertThrows(StorageException.class, () -> node(db).ensureSchema(V1, List.of()),
                        d.getKey());
                assertEquals(StorageErrorCode.PHYSICAL_LAYOUT_MISMATCH, e.code(), d.getKey());
                assertEquals(d.getValue(), e.details().get("reason"), d.getKey());
                assertEquals("tasks", e.details().get("table"));
            }
        }
    }

    @Test @Seed("relational-rows.ts retiredTableNames")
    void aTableLeftOutOfTheNewSchemaIsRetired() throws SQLException {
        String extra = "{\"name\": \"extra\", \"primaryKey\": \"id\", \"columns\": [" + ID + ", " + PROJECT
                + "], \"scopes\": [{\"pattern\": \"project:{project_id}\"}]}";
        CompiledSchema withExtra = TestSchemas.tasksWith(1, "id", V1_COLUMNS, extra);
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(withExtra, List.of());
            var desc = withExtra.table("extra").orElseThrow().descriptors();
            v1.inTransaction("p", tx -> {
                tx.upsertRow("extra", new StoredRow("x1", 1, Map.of("project_id", "p1"),
                        RowCodec.encode(desc, new Object[] {"x1", "p1"})), 0);
                return null;
            });
            node(db).ensureSchema(TestSchemas.tasksWith(2, "id", V1_COLUMNS, ""), List.of());
            assertNull(scalar(db, "SELECT to_regclass('extra')"));
            assertEquals(0L, scalar(db, "SELECT count(*) FROM sync_row_scopes WHERE tbl = 'extra'"));
        }
    }

    @Test @Timeout(60) @Seed("003: concurrent start-ups serialize on the table lock and migrate once")
    void twoNodesEnsuringTheSameSchemaAtOnceBothSucceedAndMigrateOnce() throws Exception {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            // first on an empty database (base DDL and first migration race), then two bumps
            racingNodes(db, V1);
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(V1, List.of());
            seedRows(v1, "p", 50);
            for (CompiledSchema target : List.of(V2, TestSchemas.tasksWith(3, "id", V1_COLUMNS
                    + ", {\"name\": \"note\", \"type\": \"string\", \"nullable\": true}"
                    + ", {\"name\": \"rank\", \"type\": \"float\", \"nullable\": true}"
                    + ", {\"name\": \"tag\", \"type\": \"string\", \"nullable\": true}", ""))) {
                PostgresServerStorage a = racingNodes(db, target);
                var descriptors = target.table("tasks").orElseThrow().descriptors();
                RowCodec.decode(descriptors, Reads.row(a, "p", "tasks", "r00007").orElseThrow().payload());
            }
        }
    }

    /** Two nodes ensure {@code target} at the same instant; both succeed and exactly one migrates. */
    private static PostgresServerStorage racingNodes(EmbeddedPostgresSupport.Pool db, CompiledSchema target)
            throws Exception {
        return racingNodes(db, target, 1);
    }

    /** Two nodes ensure {@code target} at the same instant; both succeed and {@code migrations} of them migrate. */
    private static PostgresServerStorage racingNodes(EmbeddedPostgresSupport.Pool db, CompiledSchema target,
                                                     int migrations) throws Exception {
        PostgresServerStorage a = node(db);
        PostgresServerStorage b = node(db);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<?>> runs = new ArrayList<>();
        for (PostgresServerStorage s : List.of(a, b)) {
            runs.add(pool.submit(() -> {
                start.await();
                s.ensureSchema(target, List.of());
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : runs) f.get(30, SECONDS);
        pool.shutdown();
        assertEquals(migrations, a.migrationsApplied() + b.migrationsApplied());
        assertEquals(target.version(), a.writerVersion());
        assertEquals(target.version(), b.writerVersion());
        return a;
    }

    // ------------------------------------------------------------ declared references (SPEC §6.11)

    private static final String CARDS_V1 = "{\"name\": \"cards\", \"primaryKey\": \"id\", \"columns\": [" + ID
            + ", " + PROJECT + ", {\"name\": \"board_id\", \"type\": \"string\", \"nullable\": true}], "
            + "\"scopes\": [{\"pattern\": \"project:{project_id}\"}]";
    private static final String BOARDS = "{\"name\": \"boards\", \"primaryKey\": \"id\", \"columns\": [" + ID
            + ", " + PROJECT + "], \"scopes\": [{\"pattern\": \"project:{project_id}\"}]}";
    private static final String SLOTS = "{\"name\": \"slots\", \"primaryKey\": \"n\", \"columns\": ["
            + "{\"name\": \"n\", \"type\": \"integer\", \"nullable\": false}, " + PROJECT + "], "
            + "\"scopes\": [{\"pattern\": \"project:{project_id}\"}]}";
    /** cards(id, project_id, board_id) next to boards, no reference declared yet. */
    private static final CompiledSchema CARDS_WITHOUT_REFERENCES = TestSchemas.tasksWith(1, "id", V1_COLUMNS,
            BOARDS + ", " + CARDS_V1 + "}");
    /**
     * The bump: board_id, an existing column, now references boards; slot, a grown column, references slots, a new
     * table.
     */
    private static final CompiledSchema CARDS_WITH_REFERENCES = TestSchemas.tasksWith(2, "id", V1_COLUMNS,
            BOARDS + ", " + SLOTS + ", " + CARDS_V1.replace("\"nullable\": true}]", "\"nullable\": true}, "
                    + "{\"name\": \"slot\", \"type\": \"integer\", \"nullable\": true}]")
                    + ", \"references\": [{\"column\": \"board_id\", \"parentTable\": \"boards\"}, "
                    + "{\"column\": \"slot\", \"parentTable\": \"slots\", \"onDelete\": \"SET NULL\"}]}");

    /** {@code pg_indexes.indexdef} of the reference index of {@code table.column}, or null when there is none. */
    private static String referenceIndexDef(EmbeddedPostgresSupport.Pool db, String table, String column)
            throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? "
                        + "AND indexname = ?")) {
            ps.setString(1, table);
            ps.setString(2, RowTable.referenceIndexName(table, column));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static void assertReferenceIndex(EmbeddedPostgresSupport.Pool db, String table, String column)
            throws SQLException {
        String def = referenceIndexDef(db, table, column);
        assertTrue(def != null, () -> "no reference index on " + table + "." + column);
        assertTrue(def.startsWith("CREATE INDEX "), () -> "not a plain (non-unique) index: " + def);
        assertTrue(def.endsWith(" USING btree (_sync_partition, " + column + ", _sync_row_id)"), def);
    }

    private static long indexOid(EmbeddedPostgresSupport.Pool db, String table, String column) throws SQLException {
        return ((Number) scalar(db, "SELECT '" + RowTable.referenceIndexName(table, column)
                + "'::regclass::oid::int8")).longValue();
    }

    @Test @Seed("SPEC §6.11: the child-column index storage derives for every reference")
    void aSchemaWithReferencesIndexesEveryReferenceColumn() throws SQLException {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            node(db).ensureSchema(TestSchemas.withReferences(1), List.of());
            for (String column : List.of("board_id", "slot", "tag", "flag")) assertReferenceIndex(db, "cards", column);
            assertEquals(4L, scalar(db, "SELECT count(*) FROM pg_indexes WHERE tablename = 'cards' "
                    + "AND indexname LIKE 'cards\\_%\\_ref\\_%'"), "one per reference, nothing else");
            assertNull(referenceIndexDef(db, "tasks", "project_id"), "a column without a reference has none");
        }
    }

    @Test @Seed("SPEC §6.11: a bump that declares a reference on an existing or a grown column indexes it")
    void aBumpThatDeclaresReferencesOnAnExistingTableCreatesTheirIndexes() throws SQLException {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(CARDS_WITHOUT_REFERENCES, List.of());
            var cards = CARDS_WITHOUT_REFERENCES.table("cards").orElseThrow().descriptors();
            v1.inTransaction("p", tx -> {
                for (int i = 0; i < 5; i++) {
                    tx.upsertRow("cards", new StoredRow("c" + i, 1, Map.of("project_id", "p1"),
                            RowCodec.encode(cards, new Object[] {"c" + i, "p1", "b" + (i % 2)})), i);
                }
                return null;
            });
            assertNull(referenceIndexDef(db, "cards", "board_id"));

            PostgresServerStorage v2 = node(db);
            v2.ensureSchema(CARDS_WITH_REFERENCES, List.of());
            assertEquals(1, v2.migrationsApplied());
            assertReferenceIndex(db, "cards", "board_id");
            assertReferenceIndex(db, "cards", "slot");
            // the rows stored before the bump are in it
            assertEquals(List.of("c0", "c2", "c4"), v2.inTransaction("p", tx -> tx.scanRowsByReference("cards",
                    "board_id", "b0", null, 10)).stream().map(StoredRow::rowId).toList());
        }
    }

    @Test @Seed("SPEC §6.11 at a same-version start: the indexes stay; a missing one is made, a wrong one refused")
    void aSameVersionStartKeepsTheReferenceIndexesAndCreatesAMissingOne() throws SQLException {
        CompiledSchema schema = TestSchemas.withReferences(1);
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            node(db).ensureSchema(schema, List.of());
            long oid = indexOid(db, "cards", "board_id");
            PostgresServerStorage restart = node(db);
            restart.ensureSchema(schema, List.of());
            assertEquals(0, restart.migrationsApplied());
            assertEquals(oid, indexOid(db, "cards", "board_id"), "not rebuilt");

            // a database an older build migrated to this version has no reference index
            String name = RowTable.quoteIdent(RowTable.referenceIndexName("cards", "board_id"));
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP INDEX " + name);
            }
            PostgresServerStorage upgraded = node(db);
            upgraded.ensureSchema(schema, List.of());
            assertEquals(0, upgraded.migrationsApplied(), "the version did not move");
            assertReferenceIndex(db, "cards", "board_id");
            long made = indexOid(db, "cards", "board_id");
            node(db).ensureSchema(schema, List.of());
            assertEquals(made, indexOid(db, "cards", "board_id"));

            // IF NOT EXISTS would keep an index of that name whatever its shape: refuse to serve instead
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP INDEX " + name + "; CREATE UNIQUE INDEX " + name + " ON cards (_sync_partition, "
                        + "board_id, _sync_row_id)");
            }
            StorageException unique = assertThrows(StorageException.class, () -> node(db).ensureSchema(schema,
                    List.of()));
            assertEquals(StorageErrorCode.PHYSICAL_LAYOUT_MISMATCH, unique.code());
            assertEquals(Map.of("table", "cards", "column", "board_id", "reason", "reference index differs"),
                    unique.details());
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP INDEX " + name + "; CREATE INDEX " + name + " ON cards (board_id)");
            }
            StorageException shape = assertThrows(StorageException.class, () -> node(db).ensureSchema(schema,
                    List.of()));
            assertEquals("reference index differs", shape.details().get("reason"));
        }
    }

    @Test @Timeout(60) @Seed("003 + SPEC §6.11: concurrent start-ups that create reference indexes both succeed")
    void twoNodesCreatingTheSameReferenceIndexesAtOnceBothSucceed() throws Exception {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            racingNodes(db, CARDS_WITHOUT_REFERENCES);   // first start on an empty database
            racingNodes(db, CARDS_WITH_REFERENCES);      // the bump that adds the references
            assertReferenceIndex(db, "cards", "board_id");
            assertReferenceIndex(db, "cards", "slot");
            // the same version with both indexes missing: both nodes make them, neither migrates
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                for (String column : List.of("board_id", "slot")) {
                    s.execute("DROP INDEX " + RowTable.quoteIdent(RowTable.referenceIndexName("cards", column)));
                }
            }
            racingNodes(db, CARDS_WITH_REFERENCES, 0);
            assertReferenceIndex(db, "cards", "board_id");
            assertReferenceIndex(db, "cards", "slot");
        }
    }

    @Test @Seed("PostgreSQL truncates identifiers past 63 bytes silently: the index name is bounded and exact")
    void referenceIndexNamesOfLongNamesFitInAnIdentifierAndStayApart() throws SQLException {
        String parent = "p".repeat(63);
        String child = "c".repeat(63);
        String accented = "\u00e9".repeat(31);   // 62 bytes: the cut falls inside no character
        String first = "x".repeat(62) + "1";
        String second = "x".repeat(62) + "2";
        String ref = "{\"name\": \"%s\", \"type\": \"string\", \"nullable\": true}";
        CompiledSchema schema = TestSchemas.tasksWith(1, "id", V1_COLUMNS,
                "{\"name\": \"" + parent + "\", \"primaryKey\": \"id\", \"columns\": [" + ID + ", " + PROJECT
                        + "], \"scopes\": [{\"pattern\": \"project:{project_id}\"}]}, "
                        + "{\"name\": \"" + child + "\", \"primaryKey\": \"id\", \"columns\": [" + ID + ", "
                        + PROJECT + ", " + ref.formatted(first) + ", " + ref.formatted(second) + "], "
                        + "\"scopes\": [{\"pattern\": \"project:{project_id}\"}], \"references\": ["
                        + "{\"column\": \"" + first + "\", \"parentTable\": \"" + parent + "\"}, "
                        + "{\"column\": \"" + second + "\", \"parentTable\": \"" + parent + "\"}]}, "
                        + "{\"name\": \"" + accented + "\", \"primaryKey\": \"id\", \"columns\": [" + ID + ", "
                        + PROJECT + ", " + ref.formatted("board") + "], "
                        + "\"scopes\": [{\"pattern\": \"project:{project_id}\"}], \"references\": ["
                        + "{\"column\": \"board\", \"parentTable\": \"" + parent + "\"}]}");
        List<String> names = List.of(RowTable.referenceIndexName(child, first),
                RowTable.referenceIndexName(child, second), RowTable.referenceIndexName(accented, "board"));
        for (String n : names) {
            assertTrue(n.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 63, n);
        }
        assertEquals(3, new java.util.HashSet<>(names).size(), "the cut makes the readable parts equal; the hash not");
        assertEquals("\u00e9".repeat(25) + "_ref_", names.get(2).substring(0, 30), "cut at a character boundary");
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            node(db).ensureSchema(schema, List.of());
            try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM pg_class WHERE relkind = 'i' AND relname = ANY(?)")) {
                ps.setArray(1, c.createArrayOf("text", names.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(3, rs.getInt(1), "stored under exactly these names, nothing truncated");
                }
            }
            PostgresServerStorage restart = node(db);
            restart.ensureSchema(schema, List.of());   // found by those names: nothing to create, nothing refused
            assertEquals(0, restart.migrationsApplied());
        }
    }

    @Test @Seed("the index name is part of the stored layout: a rename would build a second index on upgrade")
    void referenceIndexNamesAreStable() {
        assertEquals("cards_board_id_ref_27f2b5cc", RowTable.referenceIndexName("cards", "board_id"));
        // the plain join would confuse these two
        assertEquals("a_b_c_ref_0c1d18f5", RowTable.referenceIndexName("a_b", "c"));
        assertEquals("a_b_c_ref_662f0bbb", RowTable.referenceIndexName("a", "b_c"));
    }

    private static void rawAppend(EmbeddedPostgresSupport.Pool db, String partition, Integer writerVersion)
            throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO sync_commits(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,"
                        + " writer_version) VALUES (?, (SELECT count(*) + 1 FROM sync_commits WHERE partition = ?),"
                        + " 'old', ?, 'a', 0, ?)")) {
            ps.setString(1, partition);
            ps.setString(2, partition);
            ps.setString(3, "raw-" + System.nanoTime());
            if (writerVersion == null) ps.setNull(4, java.sql.Types.BIGINT);
            else ps.setLong(4, writerVersion);
            ps.executeUpdate();
        }
    }

    @Test @Seed("RFC 0007: a partition first seen after the migration is fenced by the registry touch")
    void aPartitionFirstSeenAfterACheckpointMigrationIsFencedAtItsFirstTouch() throws SQLException {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage v1 = node(db);
            v1.ensureSchema(V1, List.of());
            v1.touchPartition("before", 1, "epoch-b");
            rawAppend(db, "before", null);   // no migration with checkpoints yet: pre-RFC, nothing fenced

            PostgresServerStorage v2 = node(db);
            v2.ensureSchema(V2, List.of(new CheckpointDeclaration("before", "note-backfill", 2)));
            v2.touchPartition("newcomer", 2, "epoch-n");   // first seen after the migration
            SQLException old = assertThrows(SQLException.class, () -> rawAppend(db, "newcomer", 1));
            assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, PgErrors.classify(old).code());
            assertThrows(SQLException.class, () -> rawAppend(db, "newcomer", null));
            rawAppend(db, "newcomer", 2);
            v2.touchPartition("newcomer", 3, "epoch-x");   // a later touch changes nothing
            assertEquals(2L, ((Number) scalar(db, "SELECT required_writer_version FROM sync_writer_fence "
                    + "WHERE partition = 'newcomer'")).longValue());
            assertEquals("epoch-n", v2.touchPartition("newcomer", 4, "epoch-y").logEpoch());
        }
    }

    @Test @Timeout(60) @Seed("003 RFC 0007 migration barrier: LOCK TABLE sync_partitions IN EXCLUSIVE MODE first")
    void theMigrationLockBlocksWritersAtTheirFirstStatementAndItsFenceRejectsOldOnes() throws Exception {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage old = node(db);
            old.ensureSchema(V1, List.of());
            String p = "fenced";
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try (Connection inside = db.rawConnection(); Connection late = db.rawConnection()) {
                // writer 1 is already inside: it holds its partition lock when the migration starts, and writes
                // (at the old version) when told to
                inside.setAutoCommit(false);
                CountDownLatch locked = new CountDownLatch(1);
                CountDownLatch write = new CountDownLatch(1);
                StoredRow r1 = TestSchemas.taskRow(V1, "inside", "p1", 1);
                CompletableFuture<Long> w1 = CompletableFuture.supplyAsync(() -> old.runUnit(inside, p, false, tx -> {
                    tx.lockPartitionForPush();
                    locked.countDown();
                    awaitUninterrupted(write);
                    tx.upsertRow("tasks", r1, 0);
                    return tx.appendCommit(TestSchemas.upsertCommit("inside", r1));
                }), pool);
                assertTrue(locked.await(10, SECONDS));

                PostgresServerStorage fresh = node(db);
                CompletableFuture<Void> migration = CompletableFuture.runAsync(() -> fresh.ensureSchema(V2,
                        List.of(new CheckpointDeclaration(p, "note-backfill", 2))), pool);
                LockWaits.awaitLockWaiters(db, 1, 10_000);   // the migration waits for writer 1
                assertEquals(SchemaInstaller.LOCK_FOR_MIGRATION, scalar(db, "SELECT a.query FROM pg_locks l "
                        + "JOIN pg_stat_activity a USING (pid) WHERE NOT l.granted AND l.mode = 'ExclusiveLock' "
                        + "AND l.relation = 'sync_partitions'::regclass"), "the migration waits at its LOCK TABLE");
                assertEquals(0L, scalar(db, "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                        + "WHERE a.query = '" + SchemaInstaller.LOCK_FOR_MIGRATION + "' AND l.granted AND "
                        + "l.locktype = 'relation' AND l.relation <> 'sync_partitions'::regclass AND l.relation IN "
                        + "(SELECT oid FROM pg_class WHERE relname LIKE 'sync_%' OR relname = 'tasks')"),
                        "and holds no lock on any storage table before it (acyclic lock order)");

                // writer 2 (old build) arrives now: it blocks at its FIRST statement behind the queued migration
                late.setAutoCommit(false);
                CompletableFuture<Long> w2 = CompletableFuture.supplyAsync(() -> old.runUnit(late, p, false, tx -> {
                    tx.lockPartitionForPush();
                    StoredRow r = TestSchemas.taskRow(V1, "late", "p1", 1);
                    tx.upsertRow("tasks", r, 0);
                    return tx.appendCommit(TestSchemas.upsertCommit("late", r));
                }), pool);
                LockWaits.awaitLockWaiters(db, 2, 10_000);
                assertEquals(1L, scalar(db, "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                        + "WHERE NOT l.granted AND l.relation = 'sync_partitions'::regclass AND l.mode = "
                        + "'RowExclusiveLock' AND btrim(a.query, E' \\n') LIKE 'INSERT INTO sync_partitions%'"),
                        "writer 2 waits on the table lock at its first statement");
                assertFalse(migration.isDone());
                assertFalse(w2.isDone());

                // writer 1 completes first, at the old version, before any fence exists
                write.countDown();
                assertEquals(1, w1.get(10, SECONDS));
                inside.commit();

                migration.get(30, SECONDS);
                assertEquals(2, fresh.writerVersion());
                var installed = Checkpoints.read(fresh, p);
                assertEquals(1, installed.size(), "the migration installed the declaration with its fence");
                assertEquals("note-backfill", installed.get(0).name());
                assertEquals(2, installed.get(0).schemaVersion());
                assertEquals(syncular.jakarta.storage.CheckpointState.DECLARED, installed.get(0).state());
                assertEquals(77L, installed.get(0).updatedAtMs(), "stamped with the storage's clock");
                // writer 2 ran after the migration committed: the fence the migration raised rejects it
                var failure = assertThrows(java.util.concurrent.ExecutionException.class, () -> w2.get(30, SECONDS));
                assertTrue(failure.getCause() instanceof StorageException, () -> String.valueOf(failure.getCause()));
                assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, ((StorageException) failure.getCause()).code());
                late.rollback();

                // a writer at the new version succeeds; its payload carries the new layout
                CompiledSchema v2 = V2;
                StoredRow r3 = new StoredRow("new", 1, Map.of("project_id", "p1"), RowCodec.encode(
                        v2.table("tasks").orElseThrow().descriptors(), new Object[] {"new", "p1", "t", true, "n", 1.5}));
                long seq = fresh.inTransaction(p, tx -> {
                    tx.lockPartitionForPush();
                    tx.upsertRow("tasks", r3, 0);
                    return tx.appendCommit(TestSchemas.upsertCommit("new", r3));
                });
                assertEquals(2, seq);
                assertEquals("n", scalar(db, "SELECT note FROM tasks WHERE _sync_row_id = 'new'"));
            } finally {
                pool.shutdownNow();
            }
        }
    }
}

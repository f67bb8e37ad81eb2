package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.TransactionRunner;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.RowCodec;

/**
 * Creates and migrates the database (seeds/003 {@code migrate} and {@code ensureSchema}).
 *
 * <p>A version bump runs in ONE transaction whose first statement after the isolation level is
 * {@code LOCK TABLE sync_partitions IN EXCLUSIVE MODE} (RFC 0007 migration barrier): EXCLUSIVE conflicts with the
 * ROW SHARE of every writer's partition lock and the ROW EXCLUSIVE of its seq allocation, so even an unaware old
 * writer blocks at its first statement while plain SELECTs continue; the migration holds nothing else when it asks,
 * so a writer already inside completes first. Under the lock the marker is re-read: a node that lost the race finds
 * the work done and commits nothing. DDL, payload re-encode, marker, checkpoint rows and fences commit together.
 * No advisory lock is involved.
 *
 * <p>The child-column index of every declared reference ({@link RowTable.ReferenceScan}) is created in that
 * transaction, whether its table is new, grown, or only gained the reference. A start at the same version creates
 * a missing one under the same lock (a database an older build migrated has none); one with the right name and
 * another shape is a physical-layout mismatch.
 */
final class SchemaInstaller {
    private static final System.Logger LOG = System.getLogger(SchemaInstaller.class.getName());
    private static final int REWRITE_BATCH = 500;

    static final String LOCK_FOR_MIGRATION = "LOCK TABLE sync_partitions IN EXCLUSIVE MODE";
    static final String READ_MARKER = "SELECT schema_version, layouts, primary_keys FROM sync_schema_meta WHERE id = 1";
    static final String WRITE_MARKER = """
            INSERT INTO sync_schema_meta(id, schema_version, layouts, primary_keys) VALUES (1, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts,
                                           primary_keys = EXCLUDED.primary_keys""";
    static final String INCOMPLETE_CHECKPOINTS =
            "SELECT partition, name FROM sync_backfill_checkpoints WHERE schema_version = ? AND state <> 'activated'";
    /** seeds/003: resolved through {@code to_regclass}, which follows search_path as the row queries do. */
    static final String PHYSICAL_COLUMNS = """
            SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef,
                   COALESCE((SELECT k.position::int
                               FROM pg_index pk, unnest(pk.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                              WHERE pk.indrelid = a.attrelid AND pk.indisprimary AND k.attnum = a.attnum), 0),
                   (SELECT co.collname FROM pg_collation co WHERE co.oid = a.attcollation)
              FROM pg_attribute a
             WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped""";
    /**
     * The relation a reference index name resolves to (through search_path, as the row queries do): whether it is an
     * index of the table, its access method, uniqueness, validity, whether it is partial or on expressions, and its
     * columns in key order. No row: no relation has the name. Params: index, table.
     */
    static final String REFERENCE_INDEX = """
            SELECT ix.indrelid IS NOT DISTINCT FROM to_regclass(?), am.amname, ix.indisunique, ix.indisvalid,
                   ix.indpred IS NULL AND ix.indexprs IS NULL,
                   ARRAY(SELECT a.attname::text
                           FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                           JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum
                          ORDER BY k.position)
              FROM pg_class ic
              LEFT JOIN pg_index ix ON ix.indexrelid = ic.oid
              LEFT JOIN pg_am am ON am.oid = ic.relam
             WHERE ic.oid = to_regclass(?)""";

    record Marker(int version, Map<String, List<SchemaLayouts.ColumnLayout>> layouts, Map<String, String> keys) { }

    private final DataSource dataSource;
    private final TransactionRunner runner;
    private final LongSupplier clock;
    /** Migrations this instance committed (tests: two racing nodes migrate once between them). */
    private final AtomicInteger migrationsApplied = new AtomicInteger();

    SchemaInstaller(DataSource dataSource, TransactionRunner runner, LongSupplier clock) {
        this.dataSource = dataSource;
        this.runner = runner;
        this.clock = clock;
    }

    int migrationsApplied() { return migrationsApplied.get(); }

    // ------------------------------------------------------------ base DDL

    /** Idempotent storage DDL; a no-op (one catalog read) when everything is in place. */
    void migrateBase() {
        if (baseIsCurrent()) return;
        try {
            runner.inNewTransaction(c -> {
                exec(c, CommitLogSql.SET_READ_COMMITTED);
                exec(c, PostgresDdl.CREATE_PARTITIONS);
                return null;
            });
        } catch (StorageException e) {
            // two nodes creating the first table at once (nothing to lock yet): the table exists either way
            if (!PgErrors.lostCreateRace(e)) throw e;
        }
        runner.inNewTransaction(c -> {
            exec(c, CommitLogSql.SET_READ_COMMITTED);
            exec(c, LOCK_FOR_MIGRATION);   // serializes concurrent start-ups; the DDL below is IF NOT EXISTS
            for (String ddl : PostgresDdl.STATEMENTS) exec(c, ddl);
            Probe p = probe(c);
            if (!PostgresDdl.FENCE_FUNCTION_BODY.equals(p.fenceSource)) exec(c, PostgresDdl.CREATE_FENCE_FUNCTION);
            if (!p.trigger) {
                exec(c, PostgresDdl.DROP_FENCE_TRIGGER);
                exec(c, PostgresDdl.CREATE_FENCE_TRIGGER);
            }
            return null;
        });
    }

    private record Probe(long tables, String fenceSource, boolean trigger, boolean primaryKeys, boolean writerVersion) {
        boolean current() {
            return tables == PostgresDdl.TABLES.size() && PostgresDdl.FENCE_FUNCTION_BODY.equals(fenceSource)
                    && trigger && primaryKeys && writerVersion;
        }
    }

    private boolean baseIsCurrent() {
        try (Connection c = dataSource.getConnection()) {
            return probe(c).current();
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    private static Probe probe(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(PostgresDdl.PROBE)) {
            ps.setArray(1, c.createArrayOf("text", PostgresDdl.TABLES.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Probe(rs.getLong(1), rs.getString(2), rs.getBoolean(3), rs.getBoolean(4), rs.getBoolean(5));
            }
        }
    }

    // ------------------------------------------------------------ ensureSchema

    /**
     * Everything {@code ensureSchema} does below its memo (seeds/003 order): base DDL, the checkpoint barrier, the
     * marker, then same-version checks or the migration.
     */
    void ensure(CompiledSchema schema, List<CheckpointDeclaration> declarations) {
        migrateBase();
        assertNoUndeclaredCheckpoints(schema.version(), declarations);
        Marker marker = read(SchemaInstaller::readMarker);
        if (marker != null && marker.version > schema.version()) throw newer(marker.version, schema.version());
        if (marker != null && marker.version == schema.version()) {
            verifySameVersion(schema, marker);
            return;
        }
        boolean migratedHere = runner.inNewTransaction(c -> migrate(c, schema, declarations));
        if (migratedHere) migrationsApplied.incrementAndGet();
        if (!migratedHere) {
            // another node migrated to this version while we waited on the table lock: verify what it left
            assertNoUndeclaredCheckpoints(schema.version(), declarations);
            Marker now = read(SchemaInstaller::readMarker);
            verifySameVersion(schema, now);
        }
    }

    private void verifySameVersion(CompiledSchema schema, Marker marker) {
        SchemaLayouts.assertSameLayouts(schema, marker.layouts, marker.keys);
        List<RowTable.ReferenceScan> missing = read(c -> {
            assertPhysical(c, schema);
            return missingReferenceIndexes(c, schema);
        });
        if (!missing.isEmpty()) createMissingReferenceIndexes(schema, missing.size());
    }

    /**
     * A same-version start whose database lacks reference indexes (migrated by a build that made none, or one was
     * dropped): they are created under the migration lock, so concurrent start-ups serialize and the later ones find
     * them. Writers of every partition wait while an index builds; this happens once per database.
     */
    private void createMissingReferenceIndexes(CompiledSchema schema, int count) {
        LOG.log(System.Logger.Level.INFO, () -> "creating " + count + " missing reference index(es) at storage schema "
                + schema.version());
        try {
            runner.inNewTransaction(c -> {
                exec(c, CommitLogSql.SET_READ_COMMITTED);
                exec(c, LOCK_FOR_MIGRATION);
                Marker marker = readMarker(c);
                // another node bumped the schema meanwhile: its migration made the indexes its schema declares, and
                // this build's next ensure finds the newer marker
                if (marker == null || marker.version != schema.version()) return null;
                createReferenceIndexes(c, schema);
                assertReferenceIndexes(c, schema);
                return null;
            });
        } catch (StorageException e) {
            // a session that creates without the lock (none of ours) may still race us: the index exists either way
            if (!PgErrors.lostCreateRace(e)) throw e;
            read(c -> {
                assertReferenceIndexes(c, schema);
                return null;
            });
        }
    }

    /** seeds/003: a non-activated checkpoint at this version that the caller did not declare means do not serve. */
    private void assertNoUndeclaredCheckpoints(int version, List<CheckpointDeclaration> declarations) {
        List<CheckpointDeclaration> declared = declarations == null ? List.of() : declarations;
        read(c -> {
            try (PreparedStatement ps = c.prepareStatement(INCOMPLETE_CHECKPOINTS)) {
                ps.setInt(1, version);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String p = rs.getString(1);
                        String n = rs.getString(2);
                        if (declared.stream().noneMatch(d -> d.partition().equals(p) && d.name().equals(n))) {
                            throw new StorageException(StorageErrorCode.CHECKPOINT_INCOMPLETE,
                                    Map.of("partition", p, "name", n));
                        }
                    }
                }
            }
            return null;
        });
    }

    /** The migration transaction; false when another node had already migrated (nothing written). */
    private boolean migrate(Connection c, CompiledSchema schema, List<CheckpointDeclaration> declarations)
            throws SQLException {
        exec(c, CommitLogSql.SET_READ_COMMITTED);
        exec(c, LOCK_FOR_MIGRATION);
        Marker marker = readMarker(c);
        if (marker != null && marker.version > schema.version()) throw newer(marker.version, schema.version());
        if (marker != null && marker.version == schema.version()) return false;
        Map<String, List<SchemaLayouts.ColumnLayout>> layouts = marker == null ? Map.of() : marker.layouts;
        Map<String, String> keys = marker == null ? Map.of() : marker.keys;
        SchemaLayouts.Plan plan = SchemaLayouts.plan(schema, layouts, keys);   // refuses before any DDL
        LOG.log(System.Logger.Level.INFO, () -> "migrating storage schema " + (marker == null ? "none" : marker.version)
                + " -> " + schema.version() + ": created " + plan.created().size() + ", grown "
                + plan.grown().size() + ", retired " + plan.retired().size());
        for (String retired : plan.retired()) {
            try (PreparedStatement ps = c.prepareStatement(
                    "DELETE FROM sync_row_scopes WHERE tbl = ?;\nDELETE FROM sync_blob_refs WHERE tbl = ?")) {
                ps.setString(1, retired);
                ps.setString(2, retired);
                ps.execute();
            }
            exec(c, "DROP TABLE IF EXISTS " + RowTable.quoteIdent(retired));
        }
        for (TableSchema t : plan.created()) exec(c, new RowTable(t).createDdl);
        for (Map.Entry<TableSchema, List<SchemaLayouts.ColumnLayout>> e : plan.grown().entrySet()) {
            TableSchema t = e.getKey();
            RowTable rt = new RowTable(t);
            for (ColumnSchema col : t.columns().subList(e.getValue().size(), t.columns().size())) {
                exec(c, rt.addColumnDdl(col));
            }
            reencode(c, rt, e.getValue());
        }
        // every table's, not only new and grown ones': a bump may declare a reference on an existing column
        createReferenceIndexes(c, schema);
        assertPhysical(c, schema);
        assertReferenceIndexes(c, schema);
        try (PreparedStatement ps = c.prepareStatement(WRITE_MARKER)) {
            ps.setLong(1, schema.version());
            ps.setString(2, SchemaLayouts.layoutsJson(schema));
            ps.setString(3, SchemaLayouts.primaryKeysJson(schema));
            ps.executeUpdate();
        }
        // seeds/003: declarations install in the schema-bump transaction, so no observer sees the bumped marker
        // without the fence, or the fence without its declaration row
        long now = clock.getAsLong();
        for (CheckpointDeclaration d : declarations == null ? List.<CheckpointDeclaration>of() : declarations) {
            PostgresServerStorage.installCheckpointOn(c, d.partition(), d.name(), d.schemaVersion(), now);
        }
        return true;
    }

    /**
     * Every stored payload of a grown table re-encodes under the new column list (decode with the stored layout,
     * append NULLs, encode): the write and serve paths decode stored payloads with the CURRENT schema, so this is
     * a correctness requirement of the bump (relational-rows.ts {@code migratePayload}). FLOAT bits survive exactly.
     */
    private static void reencode(Connection c, RowTable rt, List<SchemaLayouts.ColumnLayout> oldLayout)
            throws SQLException {
        List<ColumnDescriptor> before = oldLayout.stream().map(SchemaLayouts.ColumnLayout::descriptor).toList();
        List<ColumnDescriptor> after = rt.descriptors;
        String afterPartition = "";
        String afterRowId = "";
        try (PreparedStatement select = c.prepareStatement(rt.selectForRewriteSql());
             PreparedStatement update = c.prepareStatement(rt.rewritePayloadSql())) {
            while (true) {
                select.setString(1, afterPartition);
                select.setString(2, afterRowId);
                select.setInt(3, REWRITE_BATCH);
                int n = 0;
                try (ResultSet rs = select.executeQuery()) {
                    while (rs.next()) {
                        n++;
                        afterPartition = rs.getString(1);
                        afterRowId = rs.getString(2);
                        Object[] oldValues = RowCodec.decodeLossless(before, rs.getBytes(3));
                        Object[] values = new Object[after.size()];
                        System.arraycopy(oldValues, 0, values, 0, oldValues.length);
                        update.setBytes(1, RowCodec.encode(after, values));
                        update.setString(2, afterPartition);
                        update.setString(3, afterRowId);
                        update.addBatch();
                    }
                }
                if (n > 0) update.executeBatch();
                if (n < REWRITE_BATCH) break;
            }
        }
    }

    /**
     * The physical tables must be what the running code reads and writes (seeds/003 {@code assertPhysicalColumns}):
     * every expected column with its type, NOT NULL and primary-key position, the row id in collation "C", and no
     * extra column the upsert could not fill.
     */
    static void assertPhysical(Connection c, CompiledSchema schema) throws SQLException {
        for (TableSchema t : schema.tables()) {
            RowTable rt = new RowTable(t);
            Map<String, Object[]> actual = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(PHYSICAL_COLUMNS)) {
                ps.setString(1, rt.quoted);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        actual.put(rs.getString(1), new Object[] {rs.getString(2), rs.getBoolean(3), rs.getBoolean(4),
                                rs.getInt(5), rs.getString(6)});
                    }
                }
            }
            if (actual.isEmpty()) throw physical(t.name(), null, "table missing");
            Map<String, RowTable.PhysicalColumn> expected = new HashMap<>();
            for (RowTable.PhysicalColumn e : rt.expectedPhysical()) {
                expected.put(e.name(), e);
                Object[] a = actual.get(e.name());
                if (a == null) throw physical(t.name(), e.name(), "column missing");
                if (!e.type().equals(a[0])) throw physical(t.name(), e.name(), "type differs");
                if (e.notNull() != (Boolean) a[1]) throw physical(t.name(), e.name(), "NOT NULL differs");
                if (e.keyPosition() != (Integer) a[3]) throw physical(t.name(), e.name(), "primary key differs");
                if (e.collation() != null && !e.collation().equals(a[4])) {
                    throw physical(t.name(), e.name(), "collation differs");
                }
            }
            for (Map.Entry<String, Object[]> a : actual.entrySet()) {
                if (expected.containsKey(a.getKey())) continue;
                Object[] v = a.getValue();
                if ((Integer) v[3] != 0) throw physical(t.name(), a.getKey(), "primary key differs");
                if ((Boolean) v[1] && !(Boolean) v[2]) throw physical(t.name(), a.getKey(), "unexpected NOT NULL column");
            }
        }
    }

    /** {@code CREATE INDEX IF NOT EXISTS} of every reference's child-column index. */
    private static void createReferenceIndexes(Connection c, CompiledSchema schema) throws SQLException {
        for (TableSchema t : schema.tables()) {
            for (RowTable.ReferenceScan r : new RowTable(t).references.values()) exec(c, r.createIndexDdl);
        }
    }

    private static void assertReferenceIndexes(Connection c, CompiledSchema schema) throws SQLException {
        List<RowTable.ReferenceScan> missing = missingReferenceIndexes(c, schema);
        if (!missing.isEmpty()) {
            throw physical(missing.get(0).table(), missing.get(0).column, "reference index missing");
        }
    }

    /**
     * The reference indexes no relation has the name of; a relation that has it but is not that index (another
     * table's, another shape, unique, partial, invalid) is refused: {@code IF NOT EXISTS} would keep it.
     */
    static List<RowTable.ReferenceScan> missingReferenceIndexes(Connection c, CompiledSchema schema)
            throws SQLException {
        List<RowTable.ReferenceScan> missing = new ArrayList<>();
        for (TableSchema t : schema.tables()) {
            RowTable rt = new RowTable(t);
            for (RowTable.ReferenceScan r : rt.references.values()) {
                try (PreparedStatement ps = c.prepareStatement(REFERENCE_INDEX)) {
                    ps.setString(1, rt.quoted);
                    ps.setString(2, RowTable.quoteIdent(r.indexName));
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            missing.add(r);
                            continue;
                        }
                        boolean shaped = rs.getBoolean(1) && "btree".equals(rs.getString(2)) && !rs.getBoolean(3)
                                && rs.getBoolean(4) && rs.getBoolean(5) && java.util.Arrays.equals(
                                        new Object[] {RowTable.PARTITION, r.column, RowTable.ROW_ID},
                                        (Object[]) rs.getArray(6).getArray());
                        if (!shaped) throw physical(t.name(), r.column, "reference index differs");
                    }
                }
            }
        }
        return missing;
    }

    private static StorageException physical(String table, String column, String reason) {
        return new StorageException(StorageErrorCode.PHYSICAL_LAYOUT_MISMATCH,
                SchemaLayouts.details(table, column, reason));
    }

    private static StorageException newer(int stored, int running) {
        return new StorageException(StorageErrorCode.STORED_SCHEMA_NEWER,
                Map.of("storedSchemaVersion", Integer.toString(stored),
                        "runningSchemaVersion", Integer.toString(running)));
    }

    static Marker readMarker(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(READ_MARKER)) {
            if (!rs.next()) return null;
            return new Marker(Math.toIntExact(rs.getLong(1)), SchemaLayouts.parseLayouts(rs.getString(2)),
                    SchemaLayouts.parsePrimaryKeys(rs.getString(3)));
        }
    }

    private <T> T read(PostgresServerStorage.SqlRead<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}

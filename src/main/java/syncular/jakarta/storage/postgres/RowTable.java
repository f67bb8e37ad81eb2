package syncular.jakarta.storage.postgres;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.schema.ColumnReference;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.TypeTag;

/**
 * The relational projection of one schema table (upstream relational-rows.ts): a real table with the schema's
 * columns, typed, plus internal columns. The verbatim row-codec payload ({@code _sync_payload}) is the ONLY source
 * the serve path reads; the typed columns are a queryable projection written from the decoded payload in the same
 * statement, so they cannot drift from it.
 *
 * <p>Where PostgreSQL cannot hold a value exactly, the projection stores the nearest value it can and the payload
 * stays exact: {@code TEXT} cannot hold U+0000 and {@code JSONB} refuses the NUL and lone-surrogate escapes, so
 * those characters become U+FFFD in the projection (a NOT NULL column keeps a value, and the row stays queryable).
 * {@code JSONB} also normalizes key order and whitespace, which is why the serve path never reads it.
 *
 * <p>Internal columns: {@code _sync_partition}, {@code _sync_row_id} ({@code COLLATE "C"}: keyset order is byte
 * order whatever the database's locale), {@code _sync_server_version}, {@code _sync_scopes} (the stored scope map),
 * {@code _sync_payload}, and {@code _sync_column_versions} (nullable, reserved for wire 3 per-column versions;
 * wire 1/2 writes store NULL = every column at the row's version, WIRE3-DELTA §8.1). Primary key
 * ({@code _sync_partition}, {@code _sync_row_id}).
 *
 * <p>Every declared reference (SPEC §6.11) gets a non-unique btree index over ({@code _sync_partition}, the
 * reference column, {@code _sync_row_id}), named by {@link #referenceIndexName}: the children of one parent in one
 * partition are then one index range in row-id order, which a parent delete pages through by keyset
 * ({@link ReferenceScan}). Immutable and thread-safe.
 */
final class RowTable {
    static final String PARTITION = "_sync_partition";
    static final String ROW_ID = "_sync_row_id";
    static final String VERSION = "_sync_server_version";
    static final String SCOPES = "_sync_scopes";
    static final String PAYLOAD = "_sync_payload";
    static final String COLUMN_VERSIONS = "_sync_column_versions";

    final TableSchema schema;
    final List<ColumnDescriptor> descriptors;
    final String quoted;
    final String createDdl;
    final String upsertSql;
    final String deleteSql;
    /** {@link #upsertSql} and {@link #deleteSql} for many rows at once (a push group's staged writes). */
    final String upsertManySql;
    /**
     * {@link #upsertManySql} where each row must still be as its write was computed from: an existing row is only
     * updated from the version one below the written one, and a row written at version 1 must still be absent (the
     * write is skipped otherwise). Same parameters; its count tells how many rows were written.
     */
    final String upsertManyIfUnchangedSql;
    /**
     * {@link #upsertManySql} for rows that do not exist, without {@code ON CONFLICT} (a speculative insertion costs
     * PostgreSQL about twice a plain one, per index): the rows and their scope-index entries are only inserted, so
     * a row or entry that exists fails the statement with a unique violation. Params: see {@link #bindInsertMany}.
     */
    final String insertManySql;
    final String deleteManySql;
    final String selectRowSql;
    /** {@link #selectRowSql} for many ids at once (a push's prefetch). Params: partition, rowIds[]. */
    final String selectRowsSql;
    final String scanPageSql;
    /** The child-column index and children scan of every declared reference, by reference column. */
    final Map<String, ReferenceScan> references;
    /** The ordinals of the {@code blob_ref} columns (SPEC §5.9.4); empty: the writes leave the blob index alone. */
    private final int[] blobRefColumns;

    RowTable(TableSchema schema) {
        this.schema = schema;
        this.descriptors = schema.descriptors();
        this.blobRefColumns = java.util.stream.IntStream.range(0, descriptors.size())
                .filter(k -> descriptors.get(k).type() == TypeTag.BLOB_REF).toArray();
        this.quoted = quoteIdent(schema.name());
        this.createDdl = buildCreateDdl();
        this.upsertSql = buildUpsertSql();
        this.deleteSql = buildDeleteSql();
        this.upsertManySql = buildUpsertManySql(Upsert.REPLACE);
        this.upsertManyIfUnchangedSql = buildUpsertManySql(Upsert.REPLACE_IF_UNCHANGED);
        this.insertManySql = buildUpsertManySql(Upsert.INSERT);
        this.deleteManySql = buildDeleteManySql();
        this.selectRowSql = "SELECT " + q(ROW_ID) + ", " + q(VERSION) + ", " + q(SCOPES) + "::text, " + q(PAYLOAD)
                + ", " + q(COLUMN_VERSIONS) + " FROM " + quoted + " WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID) + " = ?";
        this.selectRowsSql = "SELECT " + q(ROW_ID) + ", " + q(VERSION) + ", " + q(SCOPES) + "::text, " + q(PAYLOAD)
                + ", " + q(COLUMN_VERSIONS) + " FROM " + quoted + " WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID) + " = ANY(?::text[])";
        this.scanPageSql = buildScanPageSql();
        this.scanPageOneValueSql = scanPageSql.replace("value = ANY(?::text[])", "value = ?");
        Map<String, ReferenceScan> refs = new LinkedHashMap<>();
        for (ColumnReference r : schema.references()) refs.put(r.column(), new ReferenceScan(r.column()));
        this.references = Collections.unmodifiableMap(refs);
    }

    static String quoteIdent(String name) { return "\"" + name.replace("\"", "\"\"") + "\""; }

    private static String q(String name) { return quoteIdent(name); }

    /** §5.3-style type affinity for PostgreSQL (relational-rows.ts {@code columnSqlType}). */
    static String sqlType(TypeTag type) {
        return switch (type) {
            case STRING, BLOB_REF -> "text";
            case INTEGER -> "bigint";
            case FLOAT -> "double precision";
            case BOOLEAN -> "boolean";
            case JSON -> "jsonb";
            case BYTES, CRDT -> "bytea";
        };
    }

    private String buildCreateDdl() {
        List<String> defs = new ArrayList<>();
        defs.add(q(PARTITION) + " text NOT NULL");
        defs.add(q(ROW_ID) + " text COLLATE \"C\" NOT NULL");
        for (ColumnSchema c : schema.columns()) defs.add(columnDef(c));
        defs.add(q(VERSION) + " bigint NOT NULL");
        defs.add(q(SCOPES) + " jsonb NOT NULL");
        defs.add(q(PAYLOAD) + " bytea NOT NULL");
        defs.add(q(COLUMN_VERSIONS) + " bytea");
        defs.add("PRIMARY KEY (" + q(PARTITION) + ", " + q(ROW_ID) + ")");
        return "CREATE TABLE IF NOT EXISTS " + quoted + " (" + String.join(", ", defs) + ")";
    }

    static String columnDef(ColumnSchema c) {
        return quoteIdent(c.name()) + " " + sqlType(c.type()) + (c.nullable() ? "" : " NOT NULL");
    }

    /** A migration appends nullable columns only (SchemaLayouts.plan), so no default is needed. */
    String addColumnDdl(ColumnSchema c) {
        return "ALTER TABLE " + quoted + " ADD COLUMN " + columnDef(c);
    }

    /**
     * One statement: the row upsert and the replacement of its scope-index entries (entries no longer in the map are
     * deleted, new ones inserted; untouched ones stay). The two row-scope sub-statements touch disjoint rows, which a
     * data-modifying CTE requires. Bind with {@link #bindUpsert}.
     */
    private String buildUpsertSql() {
        List<String> names = new ArrayList<>();
        List<String> values = new ArrayList<>();
        names.add(q(PARTITION));
        values.add("?");
        names.add(q(ROW_ID));
        values.add("?");
        for (ColumnSchema c : schema.columns()) {
            names.add(q(c.name()));
            values.add(c.type() == TypeTag.JSON ? "?::jsonb" : "?");
        }
        names.add(q(VERSION));
        values.add("?");
        names.add(q(SCOPES));
        values.add("?::jsonb");
        names.add(q(PAYLOAD));
        values.add("?");
        names.add(q(COLUMN_VERSIONS));
        values.add("?");
        List<String> updates = new ArrayList<>();
        for (String n : names.subList(2, names.size())) updates.add(n + " = EXCLUDED." + n);
        return "WITH r AS (INSERT INTO " + quoted + " (" + String.join(", ", names) + ") VALUES ("
                + String.join(", ", values) + ") ON CONFLICT (" + q(PARTITION) + ", " + q(ROW_ID)
                + ") DO UPDATE SET " + String.join(", ", updates) + " RETURNING 1),\n"
                + (blobRefColumns.length == 0 ? ROW_SCOPES_REPLACEMENT
                        : ROW_SCOPES_REPLACEMENT.stripTrailing() + ",\n" + BLOB_REFS_REPLACEMENT)
                + "SELECT count(*) FROM r";
    }

    /**
     * §5.9.4, in the row write's own statement: the row's blob references become exactly the blobs its
     * {@code blob_ref} columns name (an update to another blob or to NULL drops the old entry). Only a table with a
     * {@code blob_ref} column has it. Params: blobIds[], partition, tbl, rowId, partition, tbl, rowId.
     */
    static final String BLOB_REFS_REPLACEMENT = """
            bs AS (SELECT DISTINCT b.blob_id FROM unnest(?::text[]) AS b(blob_id)),
            bd AS (DELETE FROM sync_blob_refs x
                    WHERE x.partition = ? AND x.tbl = ? AND x.row_id = ?
                      AND NOT EXISTS (SELECT 1 FROM bs WHERE bs.blob_id = x.blob_id)),
            bi AS (INSERT INTO sync_blob_refs(partition, tbl, row_id, blob_id)
                   SELECT ?, ?, ?, bs.blob_id FROM bs ON CONFLICT DO NOTHING)
            """;

    /** {@link #BLOB_REFS_REPLACEMENT} for many rows. Params: rowIds[], blobIds[], partition, tbl, ids[], partition, tbl. */
    static final String BLOB_REFS_REPLACEMENT_MANY = """
            bs AS (SELECT DISTINCT v.row_id, v.blob_id FROM unnest(?::text[], ?::text[]) AS v(row_id, blob_id)),
            bd AS (DELETE FROM sync_blob_refs x
                    WHERE x.partition = ? AND x.tbl = ? AND x.row_id = ANY(?::text[])
                      AND NOT EXISTS (SELECT 1 FROM bs WHERE bs.row_id = x.row_id AND bs.blob_id = x.blob_id)),
            bi AS (INSERT INTO sync_blob_refs(partition, tbl, row_id, blob_id)
                   SELECT ?, ?, bs.row_id, bs.blob_id FROM bs ON CONFLICT DO NOTHING)
            """;

    /** Whether the table has {@code blob_ref} columns, whose references {@code sync_blob_refs} indexes (§5.9.4). */
    boolean referencesBlobs() { return blobRefColumns.length > 0; }

    /** The blobIds {@code values} reference through the {@code blob_ref} columns, NULLs skipped. */
    private List<String> blobIds(Object[] values) {
        List<String> ids = new ArrayList<>(blobRefColumns.length);
        for (int k : blobRefColumns) {
            if (values[k] instanceof String raw) {
                try {
                    ids.add(syncular.jakarta.wire.BlobRef.parse(raw).blobId());
                } catch (syncular.jakarta.wire.DecodeException e) {
                    // the codec validated it on the way in; a value written before that rule references nothing
                }
            }
        }
        return ids;
    }

    /**
     * The row-scope replacement shared by every table's upsert (the part the EXPLAIN check pins):
     * params: vars[], values[], partition, tbl, rowId, partition, tbl, rowId.
     */
    static final String ROW_SCOPES_REPLACEMENT = """
            s AS (SELECT v.var, v.value FROM unnest(?::text[], ?::text[]) AS v(var, value)),
            d AS (DELETE FROM sync_row_scopes x
                   WHERE x.partition = ? AND x.tbl = ? AND x.row_id = ?
                     AND NOT EXISTS (SELECT 1 FROM s WHERE s.var = x.var AND s.value = x.value)),
            i AS (INSERT INTO sync_row_scopes(partition, tbl, var, value, row_id)
                  SELECT ?, ?, s.var, s.value, ? FROM s ON CONFLICT DO NOTHING)
            """;

    private String buildDeleteSql() {
        return "WITH r AS (DELETE FROM " + quoted + " WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID) + " = ?),\n"
                + "d AS (DELETE FROM sync_row_scopes WHERE partition = ? AND tbl = ? AND row_id = ?),\n"
                // §5.9.4: a deleted row references no blobs
                + "b AS (DELETE FROM sync_blob_refs WHERE partition = ? AND tbl = ? AND row_id = ?)\n"
                + "SELECT 1";
    }

    /** The array type a projection column is bound as in {@link #upsertManySql} (JSON travels as text). */
    private static String arrayType(TypeTag type) {
        return switch (type) {
            case STRING, BLOB_REF, JSON -> "text";
            case INTEGER -> "int8";
            case FLOAT -> "float8";
            case BOOLEAN -> "bool";
            case BYTES, CRDT -> "bytea";
        };
    }

    /** How a many-row write treats rows that exist: replaced, replaced from the version below only, or refused. */
    private enum Upsert { REPLACE, REPLACE_IF_UNCHANGED, INSERT }

    /**
     * {@link #upsertSql} for many distinct rows in one statement, from one array per column; the scope-index
     * replacement for all of them (params: see {@link #bindUpsertMany}), or with {@link Upsert#INSERT} only their
     * insertion ({@link #bindInsertMany}). Its text does not depend on how many rows, so one prepared statement
     * serves every group.
     */
    private String buildUpsertManySql(Upsert mode) {
        List<String> names = new ArrayList<>();
        List<String> selects = new ArrayList<>();
        List<String> arrays = new ArrayList<>();
        List<String> aliases = new ArrayList<>();
        names.add(q(PARTITION));
        selects.add("?");
        names.add(q(ROW_ID));
        selects.add("w.row_id");
        arrays.add("?::text[]");
        aliases.add("row_id");
        List<ColumnSchema> columns = schema.columns();
        for (int k = 0; k < columns.size(); k++) {
            ColumnSchema c = columns.get(k);
            names.add(q(c.name()));
            selects.add("w.c" + k + (c.type() == TypeTag.JSON ? "::jsonb" : ""));
            arrays.add("?::" + arrayType(c.type()) + "[]");
            aliases.add("c" + k);
        }
        names.add(q(VERSION));
        selects.add("w.version");
        arrays.add("?::int8[]");
        aliases.add("version");
        names.add(q(SCOPES));
        selects.add("w.scopes::jsonb");
        arrays.add("?::text[]");
        aliases.add("scopes");
        names.add(q(PAYLOAD));
        selects.add("w.payload");
        arrays.add("?::bytea[]");
        aliases.add("payload");
        names.add(q(COLUMN_VERSIONS));
        selects.add("w.column_versions");
        arrays.add("?::bytea[]");
        aliases.add("column_versions");
        String insert = "WITH r AS (INSERT INTO " + quoted + " (" + String.join(", ", names) + ")\n"
                + "  SELECT " + String.join(", ", selects) + "\n"
                + "    FROM unnest(" + String.join(", ", arrays) + ") AS w(" + String.join(", ", aliases) + ")\n";
        if (mode == Upsert.INSERT) {
            return insert + " RETURNING 1),\n"
                    + """
                    s AS (SELECT v.row_id, v.var, v.value
                            FROM unnest(?::text[], ?::text[], ?::text[]) AS v(row_id, var, value)),
                    i AS (INSERT INTO sync_row_scopes(partition, tbl, var, value, row_id)
                          SELECT ?, ?, s.var, s.value, s.row_id FROM s)
                    """ + (blobRefColumns.length == 0 ? "" : """
                    ,
                    bs AS (SELECT DISTINCT v.row_id, v.blob_id FROM unnest(?::text[], ?::text[]) AS v(row_id, blob_id)),
                    bi AS (INSERT INTO sync_blob_refs(partition, tbl, row_id, blob_id)
                           SELECT ?, ?, bs.row_id, bs.blob_id FROM bs)
                    """) + "SELECT count(*) FROM r";
        }
        List<String> updates = new ArrayList<>();
        for (String n : names.subList(2, names.size())) updates.add(n + " = EXCLUDED." + n);
        return insert
                + "  ON CONFLICT (" + q(PARTITION) + ", " + q(ROW_ID) + ") DO UPDATE SET " + String.join(", ", updates)
                + (mode == Upsert.REPLACE_IF_UNCHANGED
                        ? " WHERE " + quoted + "." + q(VERSION) + " = EXCLUDED." + q(VERSION) + " - 1" : "")
                + " RETURNING 1),\n"
                + """
                s AS (SELECT v.row_id, v.var, v.value
                        FROM unnest(?::text[], ?::text[], ?::text[]) AS v(row_id, var, value)),
                d AS (DELETE FROM sync_row_scopes x
                       WHERE x.partition = ? AND x.tbl = ? AND x.row_id = ANY(?::text[])
                         AND NOT EXISTS (SELECT 1 FROM s WHERE s.row_id = x.row_id AND s.var = x.var
                                                           AND s.value = x.value)),
                i AS (INSERT INTO sync_row_scopes(partition, tbl, var, value, row_id)
                      SELECT ?, ?, s.var, s.value, s.row_id FROM s ON CONFLICT DO NOTHING)
                """ + (blobRefColumns.length == 0 ? "" : ",\n" + BLOB_REFS_REPLACEMENT_MANY)
                + "SELECT count(*) FROM r";
    }

    /**
     * Binds {@link #upsertManySql} (or {@link #upsertManyIfUnchangedSql}) from {@code i} for {@code rows} (distinct
     * row ids); returns the next free index.
     */
    int bindUpsertMany(PreparedStatement ps, int i, String partition, List<StoredRow> rows) throws SQLException {
        return bindMany(ps, i, partition, rows, true);
    }

    /** Binds {@link #insertManySql} from {@code i} for {@code rows} (distinct row ids); returns the next free index. */
    int bindInsertMany(PreparedStatement ps, int i, String partition, List<StoredRow> rows) throws SQLException {
        return bindMany(ps, i, partition, rows, false);
    }

    /** {@code replacing}: the statement also deletes the rows' index entries that are not written again. */
    private int bindMany(PreparedStatement ps, int i, String partition, List<StoredRow> rows, boolean replacing)
            throws SQLException {
        java.sql.Connection c = ps.getConnection();
        int n = rows.size();
        int columns = descriptors.size();
        Object[][] values = new Object[n][];
        String[] ids = new String[n];
        Long[] versions = new Long[n];
        String[] scopes = new String[n];
        byte[][] payloads = new byte[n][];
        byte[][] columnVersions = new byte[n][];
        List<String> scopeRows = new ArrayList<>();
        List<String> scopeVars = new ArrayList<>();
        List<String> scopeValues = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            StoredRow row = rows.get(r);
            values[r] = RowCodec.decode(descriptors, row.payload());
            ids[r] = row.rowId();
            versions[r] = row.serverVersion();
            scopes[r] = StoredJson.scopes(row.scopes());
            payloads[r] = row.payload();
            columnVersions[r] = row.columnVersions().toBytes();
            for (Map.Entry<String, String> e : row.scopes().entrySet()) {
                scopeRows.add(row.rowId());
                scopeVars.add(e.getKey());
                scopeValues.add(e.getValue());
            }
        }
        ps.setString(i++, partition);
        ps.setArray(i++, c.createArrayOf("text", ids));
        for (int k = 0; k < columns; k++) {
            TypeTag type = descriptors.get(k).type();
            Object[] column = switch (type) {
                case STRING, BLOB_REF, JSON -> new String[n];
                case INTEGER -> new Long[n];
                case FLOAT -> new Double[n];
                case BOOLEAN -> new Boolean[n];
                case BYTES, CRDT -> new byte[n][];
            };
            for (int r = 0; r < n; r++) {
                column[r] = projected(type, values[r][k]);
            }
            ps.setArray(i++, c.createArrayOf(arrayType(type), column));
        }
        ps.setArray(i++, c.createArrayOf("int8", versions));
        ps.setArray(i++, c.createArrayOf("text", scopes));
        ps.setArray(i++, c.createArrayOf("bytea", payloads));
        ps.setArray(i++, c.createArrayOf("bytea", columnVersions));
        ps.setArray(i++, c.createArrayOf("text", scopeRows.toArray()));
        ps.setArray(i++, c.createArrayOf("text", scopeVars.toArray()));
        ps.setArray(i++, c.createArrayOf("text", scopeValues.toArray()));
        if (replacing) {
            ps.setString(i++, partition);
            ps.setString(i++, schema.name());
            ps.setArray(i++, c.createArrayOf("text", ids));
        }
        ps.setString(i++, partition);
        ps.setString(i++, schema.name());
        if (blobRefColumns.length > 0) {
            List<String> refRows = new ArrayList<>();
            List<String> refBlobs = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                for (String blob : blobIds(values[r])) {
                    refRows.add(ids[r]);
                    refBlobs.add(blob);
                }
            }
            ps.setArray(i++, c.createArrayOf("text", refRows.toArray()));
            ps.setArray(i++, c.createArrayOf("text", refBlobs.toArray()));
            if (replacing) {
                ps.setString(i++, partition);
                ps.setString(i++, schema.name());
                ps.setArray(i++, c.createArrayOf("text", ids));
            }
            ps.setString(i++, partition);
            ps.setString(i++, schema.name());
        }
        return i;
    }

    /** {@link #deleteSql} for many rows. Params: partition, rowIds[], then twice partition, tbl, rowIds[]. */
    private String buildDeleteManySql() {
        return "WITH r AS (DELETE FROM " + quoted + " WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID)
                + " = ANY(?::text[])),\n"
                + "d AS (DELETE FROM sync_row_scopes WHERE partition = ? AND tbl = ? AND row_id = ANY(?::text[])),\n"
                + "b AS (DELETE FROM sync_blob_refs WHERE partition = ? AND tbl = ? AND row_id = ANY(?::text[]))\n"
                + "SELECT 1";
    }

    int bindDeleteMany(PreparedStatement ps, int i, String partition, List<String> rowIds) throws SQLException {
        java.sql.Array ids = ps.getConnection().createArrayOf("text", rowIds.toArray());
        ps.setString(i++, partition);
        ps.setArray(i++, ids);
        for (int k = 0; k < 2; k++) {
            ps.setString(i++, partition);
            ps.setString(i++, schema.name());
            ps.setArray(i++, ids);
        }
        return i;
    }

    /**
     * {@link #scanPageSql} for one scope value (the common subscription): {@code value = ?} lets the row-scope
     * primary key (partition, tbl, var, value, row_id) serve the page as one ordered range, where {@code ANY} walks
     * the by-row index past every other value's rows. Same parameters, the fourth a text.
     */
    final String scanPageOneValueSql;

    /**
     * One snapshot page in one round trip (relational-rows.ts {@code scanRowPageSql}): candidates from the covering
     * row-scope index, ordered and limited there, LEFT JOINed to the row table. LEFT, because a candidate whose row
     * vanished must still advance the keyset cursor. Params: partition, tbl, var, values[], afterRowId, limit,
     * partition.
     */
    private String buildScanPageSql() {
        // LATERAL with LIMIT 1 (which keeps the planner from flattening it back into a join): one primary-key lookup
        // per candidate whatever the page size; as a plain join, pages of a few thousand rows were planned as a hash
        // join over the whole table, a sequential scan per page
        return "SELECT c.row_id, r." + q(VERSION) + ", r." + q(SCOPES) + "::text, r." + q(PAYLOAD) + "\n"
                + "  FROM (SELECT DISTINCT row_id FROM sync_row_scopes\n"
                + "         WHERE partition = ? AND tbl = ? AND var = ? AND value = ANY(?::text[]) AND row_id > ?\n"
                + "         ORDER BY row_id LIMIT ?) c\n"
                + "  LEFT JOIN LATERAL (SELECT " + q(VERSION) + ", " + q(SCOPES) + ", " + q(PAYLOAD) + " FROM " + quoted
                + " WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID) + " = c.row_id LIMIT 1) r ON true\n"
                + " ORDER BY c.row_id";
    }

    /**
     * Binds {@link #upsertSql} from parameter {@code i} (decodes the payload once for the projection); returns the
     * next free parameter index.
     */
    int bindUpsert(PreparedStatement ps, int i, String partition, StoredRow row) throws SQLException {
        String rowId = row.rowId();
        byte[] payload = row.payload();
        Map<String, String> scopes = row.scopes();
        Object[] values = RowCodec.decode(descriptors, payload);
        ps.setString(i++, partition);
        ps.setString(i++, rowId);
        for (int c = 0; c < descriptors.size(); c++) i = bindProjection(ps, i, descriptors.get(c).type(), values[c]);
        ps.setLong(i++, row.serverVersion());
        ps.setString(i++, StoredJson.scopes(scopes));
        ps.setBytes(i++, payload);
        ps.setBytes(i++, row.columnVersions().toBytes());
        String[] vars = scopes.keySet().toArray(new String[0]);
        String[] vals = scopes.values().toArray(new String[0]);
        ps.setArray(i++, ps.getConnection().createArrayOf("text", vars));
        ps.setArray(i++, ps.getConnection().createArrayOf("text", vals));
        for (int k = 0; k < 2; k++) {
            ps.setString(i++, partition);
            ps.setString(i++, schema.name());
            ps.setString(i++, rowId);
        }
        if (blobRefColumns.length > 0) {
            ps.setArray(i++, ps.getConnection().createArrayOf("text", blobIds(values).toArray()));
            for (int k = 0; k < 2; k++) {
                ps.setString(i++, partition);
                ps.setString(i++, schema.name());
                ps.setString(i++, rowId);
            }
        }
        return i;
    }

    /** Binds {@link #deleteSql} from parameter {@code i}; returns the next free index. */
    int bindDelete(PreparedStatement ps, int i, String partition, String rowId) throws SQLException {
        ps.setString(i++, partition);
        ps.setString(i++, rowId);
        for (int k = 0; k < 2; k++) {
            ps.setString(i++, partition);
            ps.setString(i++, schema.name());
            ps.setString(i++, rowId);
        }
        return i;
    }

    /** Binds one projection value; see the class comment for what is stored when PostgreSQL cannot hold it. */
    static int bindProjection(PreparedStatement ps, int i, TypeTag type, Object v) throws SQLException {
        if (v == null) {
            ps.setNull(i, switch (type) {
                case INTEGER -> Types.BIGINT;
                case FLOAT -> Types.DOUBLE;
                case BOOLEAN -> Types.BOOLEAN;
                case BYTES, CRDT -> Types.BINARY;
                default -> Types.VARCHAR;
            });
            return i + 1;
        }
        Object p = projected(type, v);
        switch (type) {
            case STRING, BLOB_REF, JSON -> ps.setString(i, (String) p);
            case INTEGER -> ps.setLong(i, (Long) p);
            case FLOAT -> ps.setDouble(i, (Double) p);
            case BOOLEAN -> ps.setBoolean(i, (Boolean) p);
            case BYTES, CRDT -> ps.setBytes(i, (byte[]) p);
        }
        return i + 1;
    }

    /** The value a projection column stores for a decoded {@code v} (see the class comment); null stays null. */
    static Object projected(TypeTag type, Object v) {
        if (v == null) return null;
        return switch (type) {
            case STRING, BLOB_REF -> textProjection((String) v);
            case JSON -> jsonProjection((String) v);
            default -> v;
        };
    }

    /** TEXT cannot hold U+0000. */
    static String textProjection(String s) {
        return s.indexOf('\0') < 0 ? s : s.replace('\0', '\uFFFD');
    }

    /**
     * JSONB refuses the NUL escape and lone-surrogate escapes. Valid JSON text carries those characters only as
     * escapes (raw control characters are not JSON, and the strict UTF-8 decode admits no lone surrogate), so the
     * text is rewritten at the escape level: those escapes become the U+FFFD escape, everything else is unchanged.
     */
    static String jsonProjection(String raw) {
        if (!raw.contains("\\u")) return raw;
        StringBuilder out = new StringBuilder(raw.length());
        int i = 0;
        int n = raw.length();
        while (i < n) {
            char c = raw.charAt(i);
            if (c != '\\' || i + 1 >= n) {
                out.append(c);
                i++;
                continue;
            }
            if (raw.charAt(i + 1) != 'u' || i + 6 > n) {
                out.append(c).append(raw.charAt(i + 1));   // a two-character escape, copied whole
                i += 2;
                continue;
            }
            int unit = Integer.parseInt(raw.substring(i + 2, i + 6), 16);
            if (Character.isHighSurrogate((char) unit) && i + 12 <= n && raw.charAt(i + 6) == '\\'
                    && raw.charAt(i + 7) == 'u'
                    && Character.isLowSurrogate((char) Integer.parseInt(raw.substring(i + 8, i + 12), 16))) {
                out.append(raw, i, i + 12);                 // a well-formed pair
                i += 12;
                continue;
            }
            boolean refused = unit == 0 || Character.isSurrogate((char) unit);
            out.append(refused ? "\\ufffd" : raw.substring(i, i + 6));
            i += 6;
        }
        return out.toString();
    }

    // ----------------------------------------------------------------- declared references

    /** PostgreSQL's identifier limit (NAMEDATALEN - 1): a longer name is truncated silently, never refused. */
    static final int MAX_IDENTIFIER_BYTES = 63;
    private static final String REFERENCE_INDEX_TAG = "_ref_";
    private static final int REFERENCE_INDEX_HASH_HEX = 8;

    /**
     * The name of the child-column index of reference column {@code column} of {@code table}: the table and column
     * names joined by {@code _}, cut at a character boundary so that the whole name fits in 63 bytes, then
     * {@code _ref_} and 8 hex digits of SHA-256 over the table name, a NUL and the column name. The hash is always
     * there: it keeps names apart that the cut makes equal, and names the plain join would confuse
     * ({@code a_b}.{@code c} and {@code a}.{@code b_c}); index names share one namespace per database schema.
     */
    static String referenceIndexName(String table, String column) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest((table + "\0" + column)
                    .getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
        String suffix = REFERENCE_INDEX_TAG + HexFormat.of().formatHex(digest, 0, REFERENCE_INDEX_HASH_HEX / 2);
        return utf8Prefix(table + "_" + column, MAX_IDENTIFIER_BYTES - suffix.length()) + suffix;
    }

    /** The longest prefix of {@code s} whose UTF-8 form has at most {@code maxBytes} bytes. */
    static String utf8Prefix(String s, int maxBytes) {
        int bytes = 0;
        int end = 0;
        while (end < s.length()) {
            int cp = s.codePointAt(end);
            int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + n > maxBytes) break;
            bytes += n;
            end += Character.charCount(cp);
        }
        return s.substring(0, end);
    }

    /**
     * One declared reference of this (child) table: its index and the children scan over it (SPEC §6.11). The
     * reference column has the parent key's type (the compiler checks it), so the parent's row id, a string, is
     * bound as that type; an id that the column's type cannot hold matches nothing. Where the projection is not
     * exact (a string with U+0000 or U+FFFD, JSON whose {@code jsonb} form forgets spacing and key order), the
     * index range is a superset and each candidate is checked against the value in its payload.
     */
    final class ReferenceScan {
        final String column;
        final int ordinal;
        final TypeTag type;
        final String indexName;
        final String createIndexDdl;
        /** Params: partition, parent key, limit. */
        final String firstPageSql;
        /** Params: partition, parent key, afterRowId, limit. */
        final String afterPageSql;

        private ReferenceScan(String column) {
            this.column = column;
            this.ordinal = schema.columnIndex(column);
            this.type = schema.columns().get(ordinal).type();
            if (type != TypeTag.STRING && type != TypeTag.INTEGER && type != TypeTag.BOOLEAN && type != TypeTag.JSON) {
                throw new IllegalArgumentException("a reference column cannot have type " + type.schemaName());
            }
            this.indexName = referenceIndexName(schema.name(), column);
            this.createIndexDdl = "CREATE INDEX IF NOT EXISTS " + q(indexName) + " ON " + quoted + " (" + q(PARTITION)
                    + ", " + q(column) + ", " + q(ROW_ID) + ")";
            String select = "SELECT " + q(ROW_ID) + ", " + q(VERSION) + ", " + q(SCOPES) + "::text, " + q(PAYLOAD)
                    + ", " + q(COLUMN_VERSIONS) + " FROM " + quoted + " WHERE " + q(PARTITION) + " = ? AND "
                    + q(column) + " = ?" + (type == TypeTag.JSON ? "::jsonb" : "");
            String order = " ORDER BY " + q(ROW_ID) + " LIMIT ?";
            this.firstPageSql = select + order;
            this.afterPageSql = select + " AND " + q(ROW_ID) + " > ?" + order;
        }

        /** The child table. */
        String table() { return schema.name(); }

        /** The value {@code parentRowId} is bound as, or null when no value of the column renders as it. */
        Object key(String parentRowId) {
            return switch (type) {
                case STRING -> textProjection(parentRowId);
                case INTEGER -> {
                    try {
                        long v = Long.parseLong(parentRowId);
                        // only the canonical rendering: "07" or "+7" is not the row id of the parent 7
                        yield Long.toString(v).equals(parentRowId) ? v : null;
                    } catch (NumberFormatException e) {
                        yield null;
                    }
                }
                case BOOLEAN -> parentRowId.equals("true") ? Boolean.TRUE
                        : parentRowId.equals("false") ? Boolean.FALSE : null;
                // a cast the database refuses would abort the caller's transaction, so refuse it here
                case JSON -> Json.isValid(parentRowId) ? jsonProjection(parentRowId) : null;
                default -> throw new IllegalStateException("checked in the constructor");
            };
        }

        /** Whether the index match on {@code key} is the exact match, so no candidate needs its payload checked. */
        boolean exact(Object key) {
            return switch (type) {
                case STRING -> ((String) key).indexOf('\uFFFD') < 0;
                case JSON -> false;
                default -> true;
            };
        }

        /** Whether {@code row}'s reference column, rendered as a row id, is {@code parentRowId}. */
        boolean references(StoredRow row, String parentRowId) {
            Object v = RowCodec.decode(descriptors, row.payload())[ordinal];
            return v != null && parentRowId.equals(v.toString());
        }

        int bindKey(PreparedStatement ps, int i, Object key) throws SQLException {
            switch (type) {
                case INTEGER -> ps.setLong(i, (Long) key);
                case BOOLEAN -> ps.setBoolean(i, (Boolean) key);
                default -> ps.setString(i, (String) key);
            }
            return i + 1;
        }
    }

    /** The scan of reference column {@code column}; a column that declares no reference has no index to scan. */
    ReferenceScan referenceScan(String column) {
        ReferenceScan scan = references.get(column);
        if (scan == null) throw new IllegalArgumentException("the column declares no reference");
        return scan;
    }

    // ----------------------------------------------------------------- migration

    /** Keyset walk over every partition's rows. Params: afterPartition, afterRowId, limit. */
    String selectForRewriteSql() {
        return "SELECT " + q(PARTITION) + ", " + q(ROW_ID) + ", " + q(PAYLOAD) + " FROM " + quoted
                + " WHERE (" + q(PARTITION) + ", " + q(ROW_ID) + ") > (?, ?) ORDER BY " + q(PARTITION) + ", "
                + q(ROW_ID) + " LIMIT ?";
    }

    /** Params: payload, partition, rowId. Appended columns are NULL, which ADD COLUMN already gave them. */
    String rewritePayloadSql() {
        return "UPDATE " + quoted + " SET " + q(PAYLOAD) + " = ? WHERE " + q(PARTITION) + " = ? AND " + q(ROW_ID)
                + " = ?";
    }

    // ----------------------------------------------------------- physical check

    /** The physical column every table must have: type as {@code format_type} prints it, NOT NULL, key position. */
    record PhysicalColumn(String name, String type, boolean notNull, int keyPosition, String collation) { }

    List<PhysicalColumn> expectedPhysical() {
        List<PhysicalColumn> out = new ArrayList<>();
        out.add(new PhysicalColumn(PARTITION, "text", true, 1, null));
        out.add(new PhysicalColumn(ROW_ID, "text", true, 2, "C"));
        for (ColumnSchema c : schema.columns()) {
            out.add(new PhysicalColumn(c.name(), sqlType(c.type()), !c.nullable(), 0, null));
        }
        out.add(new PhysicalColumn(VERSION, "bigint", true, 0, null));
        out.add(new PhysicalColumn(SCOPES, "jsonb", true, 0, null));
        out.add(new PhysicalColumn(PAYLOAD, "bytea", true, 0, null));
        out.add(new PhysicalColumn(COLUMN_VERSIONS, "bytea", false, 0, null));
        return out;
    }
}

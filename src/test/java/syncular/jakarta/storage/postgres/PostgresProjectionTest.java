package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.RowCodec;

/**
 * The relational projection (relational-rows.ts): typed columns written from the payload in the same statement,
 * and the verbatim payload as the only thing read back. Where PostgreSQL cannot hold a value, the projection
 * stores U+FFFD and the payload stays exact.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresProjectionTest {
    private final CompiledSchema schema = TestSchemas.allTypes(1);
    private final List<ColumnDescriptor> columns = schema.table("notes").orElseThrow().descriptors();
    private EmbeddedPostgresSupport.Pool db;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L);
        storage.ensureSchema(schema, List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    /**
     * Writes one row, either alone ({@code upsertRow}) or the way a push group does: under the lock, staged and
     * sent as the group's multi-row upsert ({@code RowTable.upsertManySql}), next to a second row of the group.
     */
    private byte[] write(String p, Object[] values, boolean group) {
        byte[] payload = RowCodec.encode(columns, values);
        StoredRow row = new StoredRow((String) values[0], 1, Map.of("org_id", (String) values[1],
                "owner_id", (String) values[2]), payload);
        storage.inTransaction(p, tx -> {
            if (!group) {
                tx.upsertRow("notes", row, 0);
                return null;
            }
            Object[] other = values.clone();
            other[0] = "other-" + values[0];
            StoredRow second = new StoredRow((String) other[0], 1, row.scopes(), RowCodec.encode(columns, other));
            tx.lockForPush(1, List.of(), List.of(), false);
            for (StoredRow r : List.of(row, second)) {
                tx.nextCandidate();
                tx.applyCommit(List.of(new RowWrite.Upsert("notes", r, 0)), new NewCommit("client-1",
                        "c-" + r.rowId(), "actor-1", 1_000L, List.of(StoredChange.upsert("notes", r.rowId(), 1,
                        r.scopes(), r.payload()))), StoredPushResult.applied(0, List.of()));
            }
            return null;
        });
        return payload;
    }

    private Object[] projection(String p, String id) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("""
                SELECT title, count, score, done, meta::text, blob, doc, meta->>'k', _sync_column_versions
                  FROM notes WHERE _sync_partition = ? AND _sync_row_id = ?""")) {
            ps.setString(1, p);
            ps.setString(2, id);
            ResultSet rs = ps.executeQuery();
            assertTrue(rs.next());
            return new Object[] {rs.getString(1), rs.getObject(2), rs.getObject(3), rs.getObject(4), rs.getString(5),
                    rs.getBytes(6), rs.getBytes(7), rs.getString(8), rs.getBytes(9)};
        }
    }

    @ParameterizedTest(name = "group write: {0}") @ValueSource(booleans = {false, true})
    @Seed("issue #4: one typed column per IR column")
    void everyTypeIsProjectedIntoItsColumnAndThePayloadIsKeptVerbatim(boolean group) throws Exception {
        String p = EmbeddedPostgresSupport.partition("types");
        byte[] payload = write(p, new Object[] {"n1", "o1", "u1", "hello", 9_007_199_254_740_991L, 0.125, true,
                "{\"k\": \"v\",  \"a\": [1, 2.50]}", new byte[] {0, 1, (byte) 0xfe}, new byte[] {7}}, group);
        Object[] row = projection(p, "n1");
        assertEquals("hello", row[0]);
        assertEquals(9_007_199_254_740_991L, row[1]);
        assertEquals(0.125, row[2]);
        assertEquals(true, row[3]);
        assertEquals("v", row[7], "json is queryable as JSONB");
        assertArrayEquals(new byte[] {0, 1, (byte) 0xfe}, (byte[]) row[5]);
        assertArrayEquals(new byte[] {7}, (byte[]) row[6]);
        assertNull(row[8], "wire 1/2 writes store NULL column versions");
        StoredRow back = Reads.row(storage, p, "notes", "n1").orElseThrow();
        assertArrayEquals(payload, back.payload(), "JSONB normalized its copy; the payload is byte-exact");
        assertEquals("{\"k\": \"v\",  \"a\": [1, 2.50]}", RowCodec.decode(columns, back.payload())[7]);
    }

    @ParameterizedTest(name = "group write: {0}") @ValueSource(booleans = {false, true})
    void nullsProjectAsNulls(boolean group) throws Exception {
        String p = EmbeddedPostgresSupport.partition("nulls");
        write(p, new Object[] {"n2", "o1", "u1", null, null, Double.NaN, false, null, null, null}, group);
        Object[] row = projection(p, "n2");
        assertNull(row[0]);
        assertNull(row[1]);
        assertTrue(Double.isNaN((Double) row[2]));
        assertNull(row[4]);
        assertNull(row[5]);
    }

    @ParameterizedTest(name = "group write: {0}") @ValueSource(booleans = {false, true})
    @Seed("issue #4: TEXT cannot hold U+0000, JSONB refuses its escape and lone surrogates")
    void charactersPostgresCannotStoreBecomeReplacementCharactersInTheProjectionOnly(boolean group) throws Exception {
        String p = EmbeddedPostgresSupport.partition("nul");
        String title = "a\u0000b";
        String meta = "{\"k\":\"x\\u0000y\",\"lone\":\"\\ud800\",\"pair\":\"\\ud83d\\ude00\",\"esc\":\"\\\\u0000\"}";
        byte[] payload = write(p, new Object[] {"n3", "o1", "u1", title, 1L, 1.0, true, meta, null, null}, group);
        Object[] row = projection(p, "n3");
        assertEquals("a\uFFFDb", row[0]);
        assertEquals("x\uFFFDy", row[7]);
        String projected = (String) row[4];
        assertTrue(projected.contains("\"lone\": \"\uFFFD\""), projected);
        assertTrue(projected.contains("\"pair\": \"\uD83D\uDE00\""), projected);
        assertTrue(projected.contains("\"esc\": \"\\\\u0000\""), "an escaped backslash is not an escape: " + projected);
        StoredRow back = Reads.row(storage, p, "notes", "n3").orElseThrow();
        assertArrayEquals(payload, back.payload());
        Object[] decoded = RowCodec.decode(columns, back.payload());
        assertEquals(title, decoded[3]);
        assertEquals(meta, decoded[7]);
        List<StoredRow> page = Reads.scan(storage, p, new RowScanQuery("notes", ScopeFilter.of("org_id", "o1"), null, 10));
        assertArrayEquals(payload, page.get(0).payload(), "the serve path reads the payload, not the projection");
    }

    @Test @Seed("relational-rows.ts quoteIdent: schema names are data, never SQL")
    void awkwardTableAndColumnNamesAreQuotedEverywhere() throws Exception {
        String table = "Order \\\"Items\\\"";   // JSON for: Order "Items"
        String columns = "{\"name\": \"select\", \"type\": \"string\", \"nullable\": false}, "
                + "{\"name\": \"Group Id\", \"type\": \"string\", \"nullable\": false}, "
                + "{\"name\": \"x;y\", \"type\": \"integer\", \"nullable\": true}";
        CompiledSchema v1 = syncular.jakarta.schema.SchemaCompiler.compile("{\"version\": 1, \"tables\": [{\"name\": \""
                + table + "\", \"primaryKey\": \"select\", \"columns\": [" + columns + "], \"scopes\": "
                + "[{\"pattern\": \"grp:{Group Id}\"}]}]}");
        CompiledSchema v2 = syncular.jakarta.schema.SchemaCompiler.compile("{\"version\": 2, \"tables\": [{\"name\": \""
                + table + "\", \"primaryKey\": \"select\", \"columns\": [" + columns
                + ", {\"name\": \"new col\", \"type\": \"json\", \"nullable\": true}], \"scopes\": "
                + "[{\"pattern\": \"grp:{Group Id}\"}]}]}");
        String name = v1.tables().get(0).name();
        assertEquals("Order \"Items\"", name);
        try (EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase()) {
            PostgresServerStorage s1 = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            s1.ensureSchema(v1, List.of());
            byte[] payload = RowCodec.encode(v1.tables().get(0).descriptors(), new Object[] {"k1", "g1", 7L});
            s1.inTransaction("p", tx -> {
                tx.upsertRow(name, new StoredRow("k1", 1, Map.of("Group Id", "g1"), payload), 0);
                return null;
            });
            PostgresServerStorage s2 = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            s2.ensureSchema(v2, List.of());
            List<StoredRow> page = Reads.scan(s2, "p", new RowScanQuery(name, ScopeFilter.of("Group Id", "g1"), null, 5));
            assertEquals(1, page.size());
            assertEquals(7L, RowCodec.decode(v2.tables().get(0).descriptors(), page.get(0).payload())[2]);
            try (Connection c = own.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT \"x;y\", \"new col\" FROM \"Order \"\"Items\"\"\" WHERE \"select\" = 'k1'")) {
                ResultSet rs = ps.executeQuery();
                assertTrue(rs.next());
                assertEquals(7L, rs.getLong(1));
                assertNull(rs.getString(2));
            }
        }
    }

    @Test
    void jsonProjectionRewritesOnlyTheRefusedEscapes() {
        assertEquals("{\"a\":\"plain\"}", RowTable.jsonProjection("{\"a\":\"plain\"}"));
        assertEquals("\"\\u00e9\\ufffd\\ufffd\"", RowTable.jsonProjection("\"\\u00e9\\u0000\\udc00\""));
        assertEquals("\"\\\\u0000\"", RowTable.jsonProjection("\"\\\\u0000\""));
    }
}

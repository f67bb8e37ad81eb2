package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;

/**
 * No scan-before-LIMIT, ever (postgres-storage.ts header, upstream {@code postgres-explain.test.ts}): on 120k
 * commits / changes / rows after ANALYZE, the exact SQL text the storage classes execute, with a scope predicate
 * selecting 0.5 % of the rows, plans index scans on the log and scope tables, both as the custom plan for the
 * bound values and as the generic plan a server-side prepared statement may switch to.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresExplainTest {
    private static final int ROWS = 120_000;
    private static final int PROJECTS = 200;   // one project = 0.5 % of the rows
    private static final String P = "big";
    private static final List<String> LOG_TABLES = List.of("sync_changes", "sync_row_scopes", "sync_change_scopes",
            "sync_commits");
    private static final int BOARDS = 2_000;   // one board's children = 0.05 % of the cards
    private final CompiledSchema schema = TestSchemas.withReferences(1);
    private EmbeddedPostgresSupport.Pool db;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() throws SQLException {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L);
        storage.ensureSchema(schema, List.of());
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            // bulk data in the shape the storage writes (two partitions, so the partition predicate matters too)
            for (String p : List.of(P, "noise")) {
                s.execute("INSERT INTO sync_partitions VALUES ('" + p + "', " + ROWS + ", 0)");
                s.execute("INSERT INTO sync_commits SELECT '" + p + "', i, 'c', 'cc' || i, 'a', 1000 + i, 1 "
                        + "FROM generate_series(1, " + ROWS + ") i");
                s.execute("INSERT INTO sync_changes SELECT '" + p + "', i, 0, 'tasks', 'r' || lpad(i::text, 7, '0'),"
                        + " 1, 1, jsonb_build_object('project_id', 'p' || (i % " + PROJECTS + ")), '\\x00'::bytea "
                        + "FROM generate_series(1, " + ROWS + ") i");
                s.execute("INSERT INTO sync_change_scopes SELECT '" + p + "', 'tasks', 'project_id', 'p' || (i % "
                        + PROJECTS + "), i FROM generate_series(1, " + ROWS + ") i");
                s.execute("INSERT INTO tasks SELECT '" + p + "', 'r' || lpad(i::text, 7, '0'), 'r' || i, 'p' || (i % "
                        + PROJECTS + "), 't', false, 1, jsonb_build_object('project_id', 'p' || (i % " + PROJECTS
                        + ")), '\\x00'::bytea, NULL FROM generate_series(1, " + ROWS + ") i");
                s.execute("INSERT INTO sync_row_scopes SELECT '" + p + "', 'tasks', 'project_id', 'p' || (i % "
                        + PROJECTS + "), 'r' || lpad(i::text, 7, '0') FROM generate_series(1, " + ROWS + ") i");
                // a stored push result per commit, from 500 clients
                s.execute("INSERT INTO sync_push_results SELECT '" + p + "', 'client' || (i % 500), 'cc' || i, "
                        + "jsonb_build_object('status', 'applied', 'commitSeq', i) FROM generate_series(1, " + ROWS
                        + ") i");
                s.execute("INSERT INTO sync_clients(partition, client_id, actor_id, wire_version, cursor, "
                        + "subscriptions, updated_at_ms) SELECT '" + p + "', 'client' || i, 'a', 2, i, '[]'::jsonb, "
                        + "1000 + i FROM generate_series(0, 499) i");
                // the first sixth of the cards on one hot board, the rest spread over BOARDS boards
                s.execute("INSERT INTO cards SELECT '" + p + "', 'r' || lpad(i::text, 7, '0'), 'r' || i, 'p' || (i % "
                        + PROJECTS + "), CASE WHEN i <= " + ROWS / 6 + " THEN 'hot' ELSE 'b' || (i % " + BOARDS
                        + ") END, i % " + BOARDS + ", jsonb_build_object('k', i % " + BOARDS + "), i % 2 = 0, 1, "
                        + "jsonb_build_object('project_id', 'p' || (i % " + PROJECTS + ")), '\\x00'::bytea, NULL "
                        + "FROM generate_series(1, " + ROWS + ") i");
            }
            s.execute("ANALYZE");
        }
    }

    @AfterAll
    void tearDown() { db.close(); }

    /** EXPLAIN with bound values (the custom plan), and EXPLAIN (GENERIC_PLAN) of the same text. */
    private List<String> plans(String sql, Binder binder) throws SQLException {
        try (Connection c = db.getConnection()) {
            String custom;
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
                binder.bind(ps, c);
                custom = text(ps.executeQuery());
            }
            String generic;
            // the simple query protocol: $n placeholders reach the server unbound, as GENERIC_PLAN needs
            String url = db.url() + (db.url().contains("?") ? "&" : "?") + "preferQueryMode=simple";
            try (Connection simple = java.sql.DriverManager.getConnection(url, "postgres", "");
                 Statement s = simple.createStatement()) {
                generic = text(s.executeQuery("EXPLAIN (GENERIC_PLAN) " + numbered(sql)));
            }
            return List.of(custom, generic);
        }
    }

    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps, Connection c) throws SQLException;
    }

    private static String numbered(String sql) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') out.append('$').append(++n);
            else out.append(ch);
        }
        return out.toString();
    }

    private static String text(ResultSet rs) throws SQLException {
        StringBuilder sb = new StringBuilder();
        while (rs.next()) sb.append(rs.getString(1)).append('\n');
        return sb.toString();
    }

    private static void assertIndexOnly(String plan, List<String> tables) {
        for (String t : LOG_TABLES) assertFalse(plan.contains("Seq Scan on " + t), () -> "Seq Scan on " + t + ":\n" + plan);
        assertFalse(plan.contains("Seq Scan on tasks"), plan);
        for (String t : tables) {
            assertTrue(plan.matches("(?s).*Index (Only )?Scan( Backward)? using \\S+ on " + t + "\\b.*"),
                    () -> "no index scan on " + t + ":\n" + plan);
        }
    }

    @Test @Seed("SPEC §4.5: the commit window reads through the change-scope index")
    void commitWindowUsesIndexScans() throws SQLException {
        for (String plan : plans(CommitLogSql.COMMIT_WINDOW_PAGE, (ps, c) -> {
            int i = 1;
            ps.setString(i++, P);
            ps.setString(i++, "tasks");
            ps.setString(i++, "project_id");
            TextArrays.bind(ps, i++, List.of("p7"));   // as the storage binds it
            ps.setLong(i++, 0);
            ps.setLong(i++, ROWS);
            ps.setInt(i++, 64);
            ps.setString(i++, P);
            ps.setString(i++, P);
            ps.setString(i++, "tasks");
        })) {
            assertIndexOnly(plan, List.of("sync_change_scopes", "sync_commits", "sync_changes"));
        }
    }

    @Test @Seed("SPEC §3.6: a pull's preamble, or several attaches', reads each client record by its key")
    void clientRecordsAndHeadProbeTheClientsKey() throws SQLException {
        for (List<String> clients : List.of(List.of("client7"), List.of("client7", "client99", "client123"))) {
            for (String plan : plans(PostgresSession.CLIENT_RECORDS_AND_HEAD, (ps, c) -> {
                TextArrays.bind(ps, 1, clients);   // as the storage binds them
                ps.setString(2, P);
                ps.setString(3, P);
            })) {
                assertFalse(plan.contains("Seq Scan on sync_clients"), plan);
                assertTrue(plan.matches("(?s).*Index (Only )?Scan using \\S+ on sync_clients\\b.*"), plan);
            }
        }
    }

    @Test @Seed("SPEC §6.3: a push group's idempotency re-check probes the results' primary key once per commit")
    void pushGroupResultReadProbesThePrimaryKeyPerPair() throws SQLException {
        String[] clients = new String[8];
        String[] commits = new String[8];
        for (int k = 0; k < 8; k++) {
            clients[k] = "client" + (k * 37 % 500);
            commits[k] = "cc" + (1000 + k * 37);
        }
        for (String plan : plans(CommitLogSql.GET_PUSH_RESULTS_OF, (ps, c) -> {
            TextArrays.bind(ps, 1, List.of(clients));   // as the storage binds them
            TextArrays.bind(ps, 2, List.of(commits));
            ps.setString(3, P);
        })) {
            assertFalse(plan.contains("Seq Scan on sync_push_results"), plan);
            assertFalse(plan.contains("Bitmap Heap Scan on sync_push_results"), plan);
            assertTrue(plan.matches("(?s).*Nested Loop.*Function Scan on \\S+.*Index Scan using \\S+ on "
                    + "sync_push_results\\b.*"), () -> "not one probe per pair:\n" + plan);
        }
    }

    /** Every project: a subscription whose scope matches the whole table. */
    private static String[] projects() {
        String[] all = new String[PROJECTS];
        for (int i = 0; i < PROJECTS; i++) all[i] = "p" + i;
        return all;
    }

    @Test @Seed("SPEC §4.7: a scope-filtered snapshot page reads through the row-scope index")
    void snapshotPageUsesIndexScans() throws SQLException {
        // a rows page (1,000), and the pages an image is built from (§5.3: 5,000) over a scope holding most rows
        for (int limit : new int[] {1000, 5000}) {
            for (String[] values : List.of(new String[] {"p7", "p8"}, projects())) {
                for (String plan : plans(storage.table("tasks").scanPageSql, (ps, c) -> {
                    ps.setString(1, P);
                    ps.setString(2, "tasks");
                    ps.setString(3, "project_id");
                    TextArrays.bind(ps, 4, List.of(values));   // as the storage binds them
                    ps.setString(5, "r0050000");
                    ps.setInt(6, limit);
                    ps.setString(7, P);
                })) {
                    assertIndexOnly(plan, List.of("sync_row_scopes", "tasks"));
                }
            }
            // one value: an ordered range of the row-scope primary key, not a walk past other values' rows
            for (String plan : plans(storage.table("tasks").scanPageOneValueSql, (ps, c) -> {
                ps.setString(1, P);
                ps.setString(2, "tasks");
                ps.setString(3, "project_id");
                ps.setString(4, "p7");
                ps.setString(5, "r0000000");
                ps.setInt(6, limit);
                ps.setString(7, P);
            })) {
                assertIndexOnly(plan, List.of("sync_row_scopes", "tasks"));
                assertTrue(plan.contains("sync_row_scopes_pkey"), () -> "not the row-scope primary key:\n" + plan);
            }
        }
    }

    @Test @Seed("seeds/002 sync_row_scopes_by_row: the row-scope replacement is an index range")
    void rowUpsertWithScopeReplacementUsesIndexScans() throws SQLException {
        RowTable t = storage.table("tasks");
        byte[] payload = TestSchemas.taskPayload(schema, "r0000007", "p9", "t", true);
        for (String plan : plans(t.upsertSql, (ps, c) -> t.bindUpsert(ps, 1, P,
                new StoredRow("r0000007", 2, Map.of("project_id", "p9"), payload)))) {
            assertIndexOnly(plan, List.of("sync_row_scopes"));
        }
        for (String plan : plans(t.deleteSql, (ps, c) -> {
            int i = 1;
            ps.setString(i++, P);
            ps.setString(i++, "r0000007");
            for (int k = 0; k < 2; k++) {
                ps.setString(i++, P);
                ps.setString(i++, "tasks");
                ps.setString(i++, "r0000007");
            }
        })) {
            assertIndexOnly(plan, List.of("sync_row_scopes", "tasks"));
        }
    }

    @Test @Seed("SPEC §6.11: a parent's children are one range of the reference index, already in row-id order")
    void childrenScanUsesTheReferenceIndex() throws SQLException {
        RowTable cards = storage.table("cards");
        // a typical board and the hot one, from the start and from a cursor; an integer and a JSON reference
        List<Object[]> cases = List.of(new Object[] {"board_id", "b7"}, new Object[] {"board_id", "hot"},
                new Object[] {"slot", 7L}, new Object[] {"tag", "{\"k\": 7}"});
        for (Object[] k : cases) {
            RowTable.ReferenceScan scan = cards.referenceScan((String) k[0]);
            for (String after : new String[] {null, "r0010000"}) {
                for (int limit : new int[] {1000, 64}) {
                    for (String plan : plans(after == null ? scan.firstPageSql : scan.afterPageSql, (ps, c) -> {
                        int i = 1;
                        ps.setString(i++, P);
                        i = scan.bindKey(ps, i, k[1]);
                        if (after != null) ps.setString(i++, after);
                        ps.setInt(i++, limit);
                    })) {
                        String where = k[0] + "/" + k[1] + "/" + after + "/" + limit + ":\n" + plan;
                        assertTrue(plan.matches("(?s).*Index Scan using " + scan.indexName + " on cards\\b.*"),
                                () -> "not the reference index, " + where);
                        assertFalse(plan.contains("Seq Scan"), where);
                        assertFalse(plan.contains("Sort"), () -> "the index gives the order, " + where);
                    }
                }
            }
        }
    }

    @Test @Seed("seeds/003 hasSourceChangesAboveOn / sourceCoverageSeq")
    void checkpointCoverageReadsUseIndexScans() throws SQLException {
        for (String plan : plans(CommitLogSql.SOURCE_CHANGES_ABOVE, (ps, c) -> {
            ps.setString(1, P);
            ps.setString(2, P);
            ps.setArray(3, c.createArrayOf("text", new String[] {"tasks"}));
            ps.setLong(4, ROWS - 10);
        })) {
            assertIndexOnly(plan, List.of("sync_changes"));
        }
        for (String plan : plans(CommitLogSql.SOURCE_COVERAGE_SEQ, (ps, c) -> {
            ps.setString(1, P);
            ps.setArray(2, c.createArrayOf("text", new String[] {"tasks"}));
        })) {
            assertIndexOnly(plan, List.of("sync_changes"));
        }
    }
}

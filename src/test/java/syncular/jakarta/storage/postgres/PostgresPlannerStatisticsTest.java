package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;

/**
 * The statistics trap of the row-scope replacement (issue 21): while PostgreSQL's statistics of
 * {@code sync_row_scopes} know nothing of a table's entries (a projection filling, a table analyzed before it
 * grew), the planner estimates the {@code (partition, tbl)} prefix at a row and deletes a many-row write's old scope
 * entries through the primary key's prefix, reading the table's whole scope range, instead of one
 * {@code sync_row_scopes_by_row} range per row. {@link PostgresServerStorage#refreshPlannerStatistics} is what a
 * bulk writer calls so that the next statement is planned on the data as it is.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresPlannerStatisticsTest {
    private static final String P = "stats";
    private static final int KNOWN = 100_000;
    private static final int GROWN = 60_000;
    private final CompiledSchema schema = TestSchemas.tasks(1);
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

    @Test @Seed("issue 21: a many-row write replaces scope entries by row once the statistics know the table")
    void theScopeReplacementReadsByRowOnceTheStatisticsAreRefreshed() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("ALTER TABLE sync_row_scopes SET (autovacuum_enabled = false)");   // nothing else analyzes
            // what the statistics saw: another table's entries only
            s.execute("INSERT INTO sync_row_scopes SELECT '" + P + "', 'notes', 'project_id', 'p' || (i % 200), "
                    + "'n' || lpad(i::text, 7, '0') FROM generate_series(1, " + KNOWN + ") i");
            s.execute("ANALYZE sync_row_scopes");
            // then tasks filled (its rows themselves do not matter to the plan)
            s.execute("INSERT INTO sync_row_scopes SELECT '" + P + "', 'tasks', 'project_id', 'p' || (i % 200), "
                    + "'r' || lpad(i::text, 7, '0') FROM generate_series(1, " + GROWN + ") i");
        }
        String stale = explainUpsertMany();
        assertTrue(stale.contains("Index Scan using sync_row_scopes_pkey on sync_row_scopes x"),
                () -> "the trap this guards against no longer shows on this PostgreSQL; the plan:\n" + stale);

        storage.refreshPlannerStatistics(List.of("tasks"));

        String refreshed = explainUpsertMany();
        assertTrue(refreshed.matches("(?s).*Index (Only )?Scan using sync_row_scopes_by_row on sync_row_scopes x\\b.*"),
                () -> "the scope replacement does not read by row:\n" + refreshed);
        assertFalse(refreshed.contains("sync_row_scopes_pkey on sync_row_scopes x"), refreshed);
        assertFalse(refreshed.contains("Seq Scan on sync_row_scopes"), refreshed);
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT relname, analyze_count FROM pg_stat_user_tables "
                     + "WHERE relname IN ('tasks', 'sync_row_scopes', 'sync_blob_refs') ORDER BY relname")) {
            List<String> analyzed = new ArrayList<>();
            while (rs.next()) analyzed.add(rs.getString(1) + "=" + rs.getLong(2));
            // the setup's ANALYZE and the refresh; blob references only for a table that has blob_ref columns
            assertTrue(analyzed.equals(List.of("sync_blob_refs=0", "sync_row_scopes=2", "tasks=1")),
                    analyzed::toString);
        }
    }

    @Test @Seed("issue 21: a refresh that cannot take its lock in time is skipped, not an error")
    void aRefreshBehindAnotherMaintenanceLockIsSkipped() throws SQLException {
        try (Connection holder = db.getConnection(); Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            // SHARE UPDATE EXCLUSIVE is what ANALYZE and VACUUM take: a concurrent one holds it like this
            s.execute("LOCK TABLE sync_row_scopes IN SHARE UPDATE EXCLUSIVE MODE");
            long before = EmbeddedPostgresSupport.analyzeCount(db, "tasks");
            storage.refreshPlannerStatistics(List.of("tasks"));   // returns after the lock timeout, no exception
            holder.rollback();
            assertTrue(EmbeddedPostgresSupport.analyzeCount(db, "tasks") == before,
                    "the whole refresh rolled back, tasks included");
        }
    }

    /** The many-row upsert of 64 new rows, executed and rolled back, with its actual plan. */
    private String explainUpsertMany() throws SQLException {
        RowTable t = storage.table("tasks");
        List<StoredRow> rows = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            String id = "z" + i;
            rows.add(new StoredRow(id, 1, TestSchemas.scopes("project_id", "p9"),
                    TestSchemas.taskPayload(schema, id, "p9", "t", false)));
        }
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, COSTS OFF) " + t.upsertManySql)) {
                t.bindUpsertMany(ps, 1, P, rows);
                StringBuilder sb = new StringBuilder();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) sb.append(rs.getString(1)).append('\n');
                }
                return sb.toString();
            } finally {
                c.rollback();
            }
        }
    }
}

package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.TestSchemas;

/**
 * The plan-cache trap (issue 14): a server-side prepared statement whose plan PostgreSQL cached as generic while the
 * log was nearly empty and never analyzed keeps that plan as the log grows. The commit-window page once cost 1.6 to
 * 3.8 ms per call that way (a hash join over the partition's whole change log) instead of 0.1 ms; the plan test on
 * an analyzed log could not see it. Here the statement is prepared and run on an almost empty, unanalyzed log with
 * autovacuum off (so nothing re-plans it), the log then grows to 40,000 commits, and the plan the cached statement
 * actually executes must still read every log table through an index, one commit at a time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresPlanCacheTest {
    private static final String P = "grows";
    private static final int GROWN = 40_000;
    private final CompiledSchema schema = TestSchemas.tasks(1);
    private EmbeddedPostgresSupport.Pool db;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 0L).ensureSchema(schema, List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    private static void insertCommits(Statement s, int from, int to) throws SQLException {
        s.execute("INSERT INTO sync_commits SELECT '" + P + "', i, 'c', 'cc' || i, 'a', 1000 + i, 1 "
                + "FROM generate_series(" + from + ", " + to + ") i");
        s.execute("INSERT INTO sync_changes SELECT '" + P + "', i, 0, 'tasks', 'r' || i, 1, 1, "
                + "jsonb_build_object('project_id', 'p' || (i % 200)), '\\x00'::bytea "
                + "FROM generate_series(" + from + ", " + to + ") i");
        s.execute("INSERT INTO sync_change_scopes SELECT '" + P + "', 'tasks', 'project_id', 'p' || (i % 200), i "
                + "FROM generate_series(" + from + ", " + to + ") i");
    }

    @Test @Seed("issue 14: the commit-window page keeps a good plan on a log that grew after it was cached")
    void theCachedCommitWindowPlanStaysOnIndexesAsTheUnanalyzedLogGrows() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            for (String t : List.of("sync_commits", "sync_changes", "sync_change_scopes")) {
                s.execute("ALTER TABLE " + t + " SET (autovacuum_enabled = false)");
            }
            insertCommits(s, 1, 5);
            s.execute("PREPARE page AS " + numbered(CommitLogSql.COMMIT_WINDOW_PAGE));
            String args = "('" + P + "', 'tasks', 'project_id', ARRAY['p7'], 0, 1000000, 64, '" + P + "', '" + P
                    + "', 'tasks')";
            for (int i = 0; i < 12; i++) s.execute("EXECUTE page" + args);   // the plan cache settles
            insertCommits(s, 6, GROWN);
            String plan;
            try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, COSTS OFF) EXECUTE page" + args)) {
                StringBuilder sb = new StringBuilder();
                while (rs.next()) sb.append(rs.getString(1)).append('\n');
                plan = sb.toString();
            }
            for (String t : List.of("sync_commits", "sync_changes", "sync_change_scopes")) {
                assertFalse(plan.contains("Seq Scan on " + t), () -> "Seq Scan on " + t + ":\n" + plan);
                assertTrue(plan.matches("(?s).*Index (Only )?Scan( Backward)? using \\S+ on " + t + "\\b.*"),
                        () -> "no index scan on " + t + ":\n" + plan);
            }
            assertFalse(plan.contains("Hash"), () -> "a hash over a log table:\n" + plan);
        }
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
}

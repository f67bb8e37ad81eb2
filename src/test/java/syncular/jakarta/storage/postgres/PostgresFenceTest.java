package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;

/**
 * The RFC 0007 writer fence is a database trigger (seeds/003 {@code syncular_writer_fence}), so it also stops
 * writers that know nothing about it: these tests insert into {@code sync_commits} with raw JDBC.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresFenceTest {
    private EmbeddedPostgresSupport.Pool db;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), System::currentTimeMillis);
        storage.migrate();
    }

    @AfterAll
    void tearDown() { db.close(); }

    private void rawInsert(String partition, long seq, Integer writerVersion) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO sync_commits(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,"
                        + " writer_version) VALUES (?, ?, 'c', ?, 'a', 0, ?)")) {
            ps.setString(1, partition);
            ps.setLong(2, seq);
            ps.setString(3, "cc-" + seq);
            if (writerVersion == null) ps.setNull(4, Types.BIGINT);
            else ps.setLong(4, writerVersion);
            ps.executeUpdate();
        }
    }

    private void raiseFence(String partition, int version) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO sync_writer_fence(partition, required_writer_version) VALUES ('" + partition
                    + "', " + version + ")");
        }
    }

    private static StorageErrorCode codeOf(SQLException e) { return PgErrors.classify(e).code(); }

    @Test @Seed("003 syncular_writer_fence")
    void fencedPartitionRejectsNullAndLowerWriterVersionsAndAcceptsCurrentOnes() throws SQLException {
        String p = EmbeddedPostgresSupport.partition("fence");
        raiseFence(p, 3);
        SQLException none = assertThrows(SQLException.class, () -> rawInsert(p, 1, null));
        assertEquals("P0001", none.getSQLState());
        assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, codeOf(none));
        SQLException lower = assertThrows(SQLException.class, () -> rawInsert(p, 2, 2));
        assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, codeOf(lower));
        rawInsert(p, 3, 3);
        rawInsert(p, 4, 4);
        assertEquals(2, countCommits(p));
    }

    @Test @Seed("003: an absent fence row is pre-RFC behaviour")
    void unfencedPartitionAcceptsNullAndAnyWriterVersion() throws SQLException {
        String p = EmbeddedPostgresSupport.partition("nofence");
        String fencedElsewhere = EmbeddedPostgresSupport.partition("other");
        raiseFence(fencedElsewhere, 9);   // a fence on another partition changes nothing here
        rawInsert(p, 1, null);
        rawInsert(p, 2, 0);
        rawInsert(p, 3, 1);
        assertEquals(3, countCommits(p));
    }

    @Test @Seed("003 appendCommit stamps writer_version")
    void appendThroughTheStorageCarriesItsWriterVersionPastTheFence() {
        CompiledSchema v1 = TestSchemas.tasks(1);
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try (own) {
            PostgresServerStorage s = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            s.ensureSchema(v1, List.of());
            String p = EmbeddedPostgresSupport.partition("stamp");
            StoredRow row = TestSchemas.taskRow(v1, "t1", "p1", 1);
            PostgresCheckpoints.declare(own, p, "cp", 1, 0);   // fence at 1 == this storage's writer version
            long seq = s.inTransaction(p, tx -> {
                tx.lockPartitionForPush();
                tx.upsertRow("tasks", row, 0);
                return tx.appendCommit(TestSchemas.upsertCommit("c1", row));
            });
            assertEquals(1, seq);
            PostgresCheckpoints.declare(own, p, "cp2", 2, 0);   // now fenced above the writer: the append is refused
            StorageException e = assertThrows(StorageException.class, () -> s.inTransaction(p, tx -> {
                tx.lockPartitionForPush();
                return tx.appendCommit(TestSchemas.upsertCommit("c2", row));
            }));
            assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, e.code());
            assertEquals(1, s.getMaxCommitSeq(p), "the refused append left no seq behind");
        }
    }

    @Test
    void anotherP0001IsNotMistakenForTheFence() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            SQLException e = assertThrows(SQLException.class,
                    () -> s.execute("DO $$ BEGIN RAISE EXCEPTION 'sync.storage.writer_fence_rejected!'; END $$"));
            assertEquals("P0001", e.getSQLState());
            assertEquals(StorageErrorCode.UNCLASSIFIED, codeOf(e));
        }
    }

    @Test @Seed("003: fences are never lowered")
    void declaringALowerCheckpointNeverLowersTheFence() throws SQLException {
        String p = EmbeddedPostgresSupport.partition("never-lower");
        PostgresCheckpoints.declare(db, p, "high", 5, 0);
        PostgresCheckpoints.declare(db, p, "low", 2, 0);
        SQLException lower = assertThrows(SQLException.class, () -> rawInsert(p, 1, 4));
        assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, codeOf(lower));
        rawInsert(p, 1, 5);
    }

    @Test @Seed("003 migrate recreates the trigger")
    void migrateRestoresATamperedFenceFunctionAndADroppedTrigger() throws SQLException {
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try (own; Connection c = own.getConnection(); Statement s = c.createStatement()) {
            PostgresServerStorage st = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            st.migrate();
            s.execute("CREATE OR REPLACE FUNCTION syncular_writer_fence() RETURNS trigger AS $$ BEGIN RETURN NEW; "
                    + "END; $$ LANGUAGE plpgsql");
            st.migrate();
            s.execute("INSERT INTO sync_writer_fence VALUES ('p', 2)");
            SQLException e = assertThrows(SQLException.class, () -> s.execute(
                    "INSERT INTO sync_commits VALUES ('p', 1, 'c', 'x', 'a', 0, NULL)"));
            assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, codeOf(e));
            s.execute("DROP TRIGGER sync_commits_writer_fence ON sync_commits");
            st.migrate();
            e = assertThrows(SQLException.class, () -> s.execute(
                    "INSERT INTO sync_commits VALUES ('p', 1, 'c', 'x', 'a', 0, 1)"));
            assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, codeOf(e));
        }
    }

    private long countCommits(String p) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM sync_commits WHERE partition = ?")) {
            ps.setString(1, p);
            var rs = ps.executeQuery();
            rs.next();
            return rs.getLong(1);
        }
    }
}

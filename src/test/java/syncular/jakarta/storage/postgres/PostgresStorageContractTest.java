package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.ServerStorageContractTest;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.TransactionRunner;

/**
 * The storage contract on PostgreSQL, plus what only this backend can show (a corrupted stored record). Runs on a
 * database whose default collation is ICU en-US, so the keyset-order contract test proves byte order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresStorageContractTest extends ServerStorageContractTest {
    private EmbeddedPostgresSupport.Pool db;
    private JdbcTransactionRunner runner;
    private PostgresServerStorage storage;

    @BeforeAll
    void setUp() {
        db = EmbeddedPostgresSupport.newLinguisticDatabase();
        runner = new JdbcTransactionRunner(db);
        storage = new PostgresServerStorage(db, runner, () -> 42L);
        storage.ensureSchema(schema(), List.of());
    }

    @AfterAll
    void tearDown() { db.close(); }

    @Override protected ServerStorage storage() { return storage; }

    @Override protected TransactionRunner runner() { return runner; }

    @Override
    protected syncular.jakarta.storage.StoredCheckpoint declare(String partition, String name, int schemaVersion,
                                                                 long nowMs) {
        return PostgresCheckpoints.declare(db, partition, name, schemaVersion, nowMs);
    }

    @Test @Seed("UPSTREAM-SERVER §5 item 3: a constraint violation is a durable rejection carrying its opIndex")
    void aConstraintViolationCarriesItsOpIndexAndTheSavepointRecoversTheTransaction() throws Exception {
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try (own) {
            PostgresServerStorage s = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            s.ensureSchema(schema(), List.of());
            try (Connection c = own.getConnection(); var st = c.createStatement()) {
                st.execute("ALTER TABLE tasks ADD CONSTRAINT no_bad_titles CHECK (title <> 'bad')");
            }
            String p = partition("constraint");
            byte[] bad = TestSchemas.taskPayload(schema(), "b1", "p1", "bad", false);
            StoredPushResult rejected = s.inTransaction(p, tx -> {
                tx.lockForPush(1, List.of(new PushKey("client-1", "k1")), List.of(), false);
                tx.upsertRow("tasks", TestSchemas.taskRow(schema(), "ok", "p1", 1), 0);
                StorageException e = assertThrows(StorageException.class, () -> tx.upsertRow("tasks",
                        new StoredRow("b1", 1, Map.of("project_id", "p1"), bad), 1));
                assertEquals(StorageErrorCode.CONSTRAINT_VIOLATION, e.code());
                assertEquals(1, e.opIndex().getAsInt());
                StoredPushResult result = StoredPushResult.rejected(List.of(new OperationResult.Failed(1,
                        "sync.constraint_violation", "constraint", false, null)));
                tx.rejectPush("client-1", "k1", result);   // the aborted transaction is usable again
                return result;
            });
            assertEquals(rejected.results(), Reads.pushResult(s, p, "client-1", "k1").orElseThrow().results());
            assertEquals(Optional.empty(), Reads.row(s, p, "tasks", "ok"));
            assertEquals(0, s.getMaxCommitSeq(p));
        }
    }

    @Test @Seed("UPSTREAM-SERVER §5 item 3, batched: the violating write of many is named by its opIndex")
    void applyCommitNamesTheViolatingWriteAmongMany() throws Exception {
        EmbeddedPostgresSupport.Pool own = EmbeddedPostgresSupport.newDatabase();
        try (own) {
            PostgresServerStorage s = new PostgresServerStorage(own, new JdbcTransactionRunner(own), () -> 0L);
            s.ensureSchema(schema(), List.of());
            try (Connection c = own.getConnection(); var st = c.createStatement()) {
                st.execute("ALTER TABLE tasks ADD CONSTRAINT no_bad_titles CHECK (title <> 'bad')");
            }
            String p = partition("batched-constraint");
            StoredRow good = TestSchemas.taskRow(schema(), "g1", "p1", 1);
            StoredRow bad = new StoredRow("b1", 1, Map.of("project_id", "p1"),
                    TestSchemas.taskPayload(schema(), "b1", "p1", "bad", false));
            for (int badAt : new int[] {0, 1, 2}) {
                List<RowWrite> writes = new java.util.ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    writes.add(new RowWrite.Upsert("tasks", i == badAt ? bad : TestSchemas.taskRow(schema(), "g" + i,
                            "p1", 1), 10 + i));
                }
                String commitId = "k" + badAt;
                // an unstaged unit sends a commit's writes at once (a staged one sends them later and, on a
                // refusal, runs again unstaged: PushGroupTest)
                try (Connection c = own.getConnection()) {
                    c.setAutoCommit(false);
                    s.runUnit(c, p, false, tx -> {
                        tx.lockForPush(1, List.of(new PushKey("client-1", commitId)), List.of(), false);
                        StorageException e = assertThrows(StorageException.class, () -> tx.applyCommit(writes,
                                TestSchemas.upsertCommit(commitId, good), StoredPushResult.applied(0, List.of())));
                        assertEquals(StorageErrorCode.CONSTRAINT_VIOLATION, e.code());
                        assertEquals(10 + badAt, e.opIndex().getAsInt());
                        tx.rejectPush("client-1", commitId, StoredPushResult.rejected(List.of(
                                new OperationResult.Failed(10 + badAt, "sync.constraint_violation", "constraint",
                                        false, null))));
                        return null;
                    });
                    c.commit();
                }
                assertEquals(StoredPushResult.Status.REJECTED,
                        Reads.pushResult(s, p, "client-1", commitId).orElseThrow().status());
            }
            assertEquals(Optional.empty(), Reads.row(s, p, "tasks", "g0"), "nothing of a rejected commit was kept");
            assertEquals(0, s.getMaxCommitSeq(p));
        }
    }

    @Test @Seed("issue 14: a push group's staged writes travel as multi-row statements")
    void aGroupsStagedWritesLeaveEveryRowInItsFinalStateAndEveryCommitInTheLog() throws Exception {
        String p = partition("staged-final");
        StoredRow x1 = TestSchemas.taskRow(schema(), "x", "p1", 1);
        StoredRow y1 = TestSchemas.taskRow(schema(), "y", "p1", 1);
        StoredRow y2 = new StoredRow("y", 2, Map.of("project_id", "p2"),
                TestSchemas.taskPayload(schema(), "y", "p2", "moved", true));
        List<Long> seqs = storage.inTransaction(p, tx -> {
            tx.lockForPush(1, List.of(), List.of(), false);
            long a = tx.applyCommit(List.of(new RowWrite.Upsert("tasks", x1, 0), new RowWrite.Upsert("tasks", y1, 1)),
                    TestSchemas.upsertCommit("a", x1), StoredPushResult.applied(0, List.of()));
            tx.nextCandidate();
            long b = tx.applyCommit(List.of(new RowWrite.Delete("tasks", "x", 0)),
                    new syncular.jakarta.storage.NewCommit("client-1", "b", "actor-1", 1_000L,
                            List.of(syncular.jakarta.storage.StoredChange.delete("tasks", "x", x1.scopes()))),
                    StoredPushResult.applied(0, List.of()));
            tx.nextCandidate();
            long c = tx.applyCommit(List.of(new RowWrite.Upsert("tasks", y2, 0)), TestSchemas.upsertCommit("c", y2),
                    StoredPushResult.applied(0, List.of()));
            return List.of(a, b, c);
        });
        assertEquals(List.of(1L, 2L, 3L), seqs);
        assertEquals(3, storage.getMaxCommitSeq(p));
        assertEquals(Optional.empty(), Reads.row(storage, p, "tasks", "x"), "deleted by the group's later commit");
        StoredRow y = Reads.row(storage, p, "tasks", "y").orElseThrow();
        assertEquals(2, y.serverVersion());
        assertEquals(Map.of("project_id", "p2"), y.scopes());
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT row_id || ':' || value FROM sync_row_scopes WHERE partition = ? ORDER BY 1")) {
            ps.setString(1, p);
            var rs = ps.executeQuery();
            List<String> entries = new java.util.ArrayList<>();
            while (rs.next()) entries.add(rs.getString(1));
            assertEquals(List.of("y:p2"), entries, "the scope index follows the final rows");
        }
        for (String id : List.of("a", "b", "c")) {
            StoredPushResult r = Reads.pushResult(storage, p, "client-1", id).orElseThrow();
            assertEquals(StoredPushResult.Status.APPLIED, r.status());
            assertEquals(seqs.get(List.of("a", "b", "c").indexOf(id)), r.commitSeq(), "the stored result's seq");
        }
    }

    @Test @Seed("ARCHITECTURE: READ COMMITTED is set, never inherited")
    void aTransactionIsReadCommittedWhateverTheSessionDefault() throws Exception {
        try (Connection c = db.rawConnection()) {
            try (var st = c.createStatement()) {
                st.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE");
            }
            c.setAutoCommit(false);
            storage.runUnit(c, partition("iso"), false, tx -> {
                tx.lockPartitionForPush();
                return null;
            });
            try (var st = c.createStatement(); var rs = st.executeQuery("SHOW transaction_isolation")) {
                rs.next();
                assertEquals("read committed", rs.getString(1));
            }
            c.rollback();
        }
    }

    @Test
    void theDatabaseReallyOrdersTextLinguistically() throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT 'a' < 'B'")) {
            var rs = ps.executeQuery();
            rs.next();
            assertEquals(true, rs.getBoolean(1), "precondition of the byte-order test: a < B in this database");
        }
    }

    @Test @Seed("SPEC §6.3: unreadable stored result → sync.idempotency_cache_miss")
    void anUnreadableStoredPushResultIsACacheMiss() throws Exception {
        String p = partition("corrupt");
        storage.inTransaction(p, tx -> {
            tx.putPushResult("c1", "k1", StoredPushResult.applied(1, List.of()));
            return null;
        });
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE sync_push_results SET result = '{\"status\":\"weird\"}' WHERE partition = ?")) {
            ps.setString(1, p);
            ps.executeUpdate();
        }
        StorageException e = assertThrows(StorageException.class, () -> Reads.pushResult(storage, p, "c1", "k1"));
        assertEquals(StorageErrorCode.IDEMPOTENCY_CACHE_MISS, e.code());
        assertEquals("sync.idempotency_cache_miss", e.code().code());
    }
}

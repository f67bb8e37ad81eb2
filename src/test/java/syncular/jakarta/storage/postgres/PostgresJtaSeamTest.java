package syncular.jakarta.storage.postgres;

import syncular.jakarta.storage.Checkpoints;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.SqlWork;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.TransactionRunner;

/**
 * The JTA design constraint: under container-managed transactions the container owns commit, rollback and
 * autocommit. This runner plays the container: it hands storage work a connection that refuses every
 * transaction-control call, and finishes the transaction itself. Every storage write path runs through it.
 */
class PostgresJtaSeamTest {
    private static final Set<String> CONTAINER_ONLY = Set.of("commit", "rollback", "setAutoCommit", "setSavepoint",
            "releaseSavepoint", "setTransactionIsolation", "close", "abort");

    /** A stand-in for an EJB REQUIRES_NEW method: the "container" commits or rolls back. */
    static final class ContainerRunner implements TransactionRunner {
        private final EmbeddedPostgresSupport.Pool db;
        final AtomicInteger transactions = new AtomicInteger();

        ContainerRunner(EmbeddedPostgresSupport.Pool db) { this.db = db; }

        @Override
        public <T> T inNewTransaction(SqlWork<T> work) {
            try (Connection raw = db.getConnection()) {
                raw.setAutoCommit(false);
                Connection enlisted = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                        new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                            if (CONTAINER_ONLY.contains(m.getName())) {
                                throw new AssertionError("storage called Connection." + m.getName()
                                        + " on a container-managed connection");
                            }
                            try {
                                return m.invoke(raw, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
                transactions.incrementAndGet();
                try {
                    T result = work.run(enlisted);
                    raw.commit();
                    return result;
                } catch (Throwable t) {
                    raw.rollback();
                    if (t instanceof RuntimeException r) throw r;
                    if (t instanceof Error e) throw e;
                    throw new IllegalStateException(t);
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Test @Seed("issue #4 JTA: storage never finishes a container's transaction")
    void everyWritePathRunsOnAContainerManagedConnection() {
        try (EmbeddedPostgresSupport.Pool db = EmbeddedPostgresSupport.newDatabase()) {
            ContainerRunner container = new ContainerRunner(db);
            CompiledSchema v1 = TestSchemas.tasks(1);
            PostgresServerStorage storage = new PostgresServerStorage(db, container, () -> 5L);
            storage.ensureSchema(v1, List.of());   // base DDL + first migration
            String p = "jta";
            storage.touchPartition(p, 1, "e1");
            StoredRow row = TestSchemas.taskRow(v1, "a", "p1", 1);
            long seq = storage.inTransaction(p, tx -> {
                tx.lockPartitionForPush();
                tx.readServeGate(1);
                tx.getPushResult("c", "k1");
                tx.upsertRow("tasks", row, 0);
                long s = tx.appendCommit(TestSchemas.upsertCommit("k1", row));
                tx.putPushResult("c", "k1", StoredPushResult.applied(s, List.of(new OperationResult.Applied(0))));
                return s;
            });
            assertEquals(1, seq);
            storage.inTransaction(p, tx -> {   // a rejection: savepoint rollback by SQL, then a normal return
                tx.lockPartitionForPush();
                tx.upsertRow("tasks", TestSchemas.taskRow(v1, "b", "p1", 1), 0);
                tx.rejectPush("c", "k2", StoredPushResult.rejected(List.of(
                        new OperationResult.Failed(0, "sync.forbidden", "no", false, null))));
                return null;
            });
            assertEquals(StoredPushResult.Status.REJECTED, Reads.pushResult(storage, p, "c", "k2").orElseThrow().status());
            assertTrue(Reads.row(storage, p, "tasks", "b").isEmpty());

            PostgresCheckpoints.declare(db, p, "cp", 1, 1);
            long epoch = Checkpoints.claim(storage, p, "cp", 1, 1).ownerEpoch();
            assertTrue(Checkpoints.advance(storage, p, "cp", epoch, 1, 1, 1));
            assertEquals(ActivationOutcome.ACTIVATED, storage.activateCheckpoint(p, "cp", epoch, 1, List.of("tasks"),
                    2));
            assertEquals(1, storage.pruneCommitsThrough(p, new CommitPruneQuery("e1", 1)).removedCommits());
            storage.rotatePartitionLogEpoch(p, "e2", 3);

            PostgresServerStorage next = new PostgresServerStorage(db, container, () -> 6L);
            next.ensureSchema(TestSchemas.tasksWith(2, "id", "{\"name\": \"id\", \"type\": \"string\", "
                    + "\"nullable\": false}, {\"name\": \"project_id\", \"type\": \"string\", \"nullable\": false}, "
                    + "{\"name\": \"title\", \"type\": \"string\", \"nullable\": false}, {\"name\": \"done\", "
                    + "\"type\": \"boolean\", \"nullable\": false}, {\"name\": \"note\", \"type\": \"string\", "
                    + "\"nullable\": true}", ""), List.of(new CheckpointDeclaration(p, "note", 2)));
            assertEquals(2, next.writerVersion());
            // an infrastructure failure inside the work still reaches the caller, and the container rolls back
            StorageException fenced = assertThrows(StorageException.class, () -> storage.inTransaction(p, tx -> {
                tx.lockPartitionForPush();
                return tx.appendCommit(TestSchemas.upsertCommit("k3", row));   // writer version 1 < fence 2
            }));
            assertEquals(StorageErrorCode.WRITER_FENCE_REJECTED, fenced.code());
            assertTrue(container.transactions.get() >= 10);
        }
    }
}

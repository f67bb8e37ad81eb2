package syncular.jakarta.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresCheckpoints;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.Leases;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.sync.Validation;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;

/**
 * The serve gate around a request of the real {@link SyncHandler} with this process's {@link Declarations}
 * (issue 7, seeds/002 handler.js, UPSTREAM-SERVER §3.6 points 3, 4 and 6). The host's scope resolver runs after the
 * entry gate and before the push transaction, so it is where these tests let a peer act "in between".
 */
class HandlerServeGateCheckpointTest {
    final CompiledSchema v2 = TestSchemas.tasks(2);
    final CompiledSchema v3 = TestSchemas.tasksWith(3, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "title", "type": "string", "nullable": false},
            {"name": "done", "type": "boolean", "nullable": false}""", """
            {"name": "titles", "primaryKey": "id",
             "columns": [{"name": "id", "type": "string", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false}],
             "scopes": [{"pattern": "project:{project_id}"}]}""");
    final String partition = EmbeddedPostgresSupport.partition("gate");
    final Identity actor = new Identity("actor-1", partition);
    /** Runs once, inside the next request, between the entry gate and the push transaction. */
    final AtomicReference<Runnable> inBetween = new AtomicReference<>();

    EmbeddedPostgresSupport.Pool db;
    PostgresServerStorage storage;
    SyncHandler handler;

    @BeforeEach
    void setUp() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), System::currentTimeMillis);
        Declarations declarations = new Declarations(List.<BackfillDefinition>of(), 2, storage);
        storage.ensureSchema(v2, declarations.current());
        ScopeResolver resolver = identity -> {
            Runnable r = inBetween.getAndSet(null);
            if (r != null) r.run();
            return Map.of("project_id", List.of("p1"));
        };
        handler = new SyncHandler(storage, () -> v2, declarations::current, resolver, System::currentTimeMillis,
                SyncSettings.DEFAULTS, (request, bytes) -> {
                    throw new AssertionError("no segment is published in these tests");
                }, Validation.NONE, Leases.OFF);
    }

    @AfterEach
    void tearDown() { db.close(); }

    RequestMessage request(String id) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader("client-1", 2));
        if (id != null) {
            frames.add(new PushCommit("commit-" + id, List.of(PushCommit.Operation.upsert("tasks", id, null,
                    TestSchemas.taskPayload(v2, id, "p1", "title " + id, false)))));
        }
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(new Subscription("s1", "tasks", Map.of("project_id", List.of("p1")), null, -1, null));
        return new RequestMessage(1, frames);
    }

    /** A peer at v3 that declares a projection migrates the database (its own storage instance). */
    void peerMigratesToV3() {
        PostgresServerStorage peer = new PostgresServerStorage(db, new JdbcTransactionRunner(db),
                System::currentTimeMillis);
        peer.ensureSchema(v3, List.of(new CheckpointDeclaration(partition, "titles_v3", 3)));
    }

    @Test
    void aMigrationThatCommitsBetweenTheEntryGateAndThePushLockRefusesThePushAndWritesNothing() {
        handler.handle(actor, request(null));   // registers the partition; serves
        long before = storage.getMaxCommitSeq(partition);
        inBetween.set(this::peerMigratesToV3);
        SyncException e = assertThrows(SyncException.class, () -> handler.handle(actor, request("t1")));
        assertEquals(ErrorCode.SYNC_SCHEMA_NOT_READY, e.code());
        assertEquals("{\"storedSchemaVersion\":3,\"runningSchemaVersion\":2}", e.detailsJson());
        assertEquals(before, storage.getMaxCommitSeq(partition), "no commit");
        assertTrue(Reads.row(storage, partition, "tasks", "t1").isEmpty(), "no row");
        assertTrue(Reads.pushResult(storage, partition, "client-1", "commit-t1").isEmpty(), "no stored result either");
    }

    @Test
    void aPeerMigratingUnderAServingProcessIsNoticedOnTheNextRequest() {
        handler.handle(actor, request("t1"));
        peerMigratesToV3();
        SyncException e = assertThrows(SyncException.class, () -> handler.handle(actor, request("t2")));
        assertEquals(ErrorCode.SYNC_SCHEMA_NOT_READY, e.code());
        assertEquals("{\"storedSchemaVersion\":3,\"runningSchemaVersion\":2}", e.detailsJson());
        assertTrue(Reads.row(storage, partition, "tasks", "t2").isEmpty());
    }

    @Test
    void aLogEpochRotationBetweenTheTwoGateReadsIsRefusedWithEmptyDetails() {
        handler.handle(actor, request(null));
        inBetween.set(() -> storage.rotatePartitionLogEpoch(partition, "restored-epoch", System.currentTimeMillis()));
        SyncException e = assertThrows(SyncException.class, () -> handler.handle(actor, request(null)));
        assertEquals(ErrorCode.SYNC_SCHEMA_NOT_READY, e.code());
        assertEquals("{}", e.detailsJson());
    }

    @Test
    void aPeersCheckpointDeclaredMidRequestRefusesThePushWithPartitionAndProjection() {
        handler.handle(actor, request(null));
        inBetween.set(() -> PostgresCheckpoints.declare(db, partition, "peer_projection", 2,
                System.currentTimeMillis()));
        SyncException e = assertThrows(SyncException.class, () -> handler.handle(actor, request("t3")));
        assertEquals("{\"partition\":\"" + partition + "\",\"projection\":\"peer_projection\"}", e.detailsJson());
        assertTrue(Reads.row(storage, partition, "tasks", "t3").isEmpty(), "refused under the push lock: nothing written");
    }
}

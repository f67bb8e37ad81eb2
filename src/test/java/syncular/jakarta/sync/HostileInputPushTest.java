package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.RowWrite;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.RowCodec;

/**
 * Issue 13 item 3 through the real push pipeline on embedded PostgreSQL: every operation-level value the database
 * cannot store (U+0000 in a rowId or a scope value, a 6 KB key, JSON with a huge exponent or deep nesting) rejects its
 * commit with a stored, replayable {@code sync.invalid_request} carrying details; nothing of the commit is written
 * (row table, row scopes, commit log, changes); the next commit of the batch applies. The database's own refusal
 * (class 22/54), for a value the up-front rules do not catch, takes the same path.
 */
class HostileInputPushTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasksWith(1, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "meta", "type": "json", "nullable": true}""", "");
    private static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private String partition;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    @BeforeEach
    void fresh() { partition = EmbeddedPostgresSupport.partition("hostile"); }

    private static PushCommit.Operation upsert(String id, String project, String metaJson) {
        return new PushCommit.Operation("tasks", id, Op.UPSERT, null,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, project, metaJson}));
    }

    private PushProcessor.Outcome apply(ServerStorage on, String commitId, PushCommit.Operation... ops) {
        return Pushes.one(new PushProcessor(on, () -> 1_000L, Validation.NONE, 1000),
                new PushProcessor.RequestScope(new Identity("actor-1", partition), "client-1", 2), SCHEMA, ALL,
                new PushCommit(commitId, List.of(ops)));
    }

    private PushProcessor.Outcome apply(String commitId, PushCommit.Operation... ops) {
        return apply(storage, commitId, ops);
    }

    /** Rejected at {@code opIndex} with a stored, replayable {@code sync.invalid_request} and its details. */
    private void assertRejectedAndReplayed(String commitId, int opIndex, String reason, PushCommit.Operation... ops) {
        partition = EmbeddedPostgresSupport.partition("hostile");
        PushProcessor.Outcome first = apply(commitId, ops);
        assertEquals(PushResult.Status.REJECTED, first.result().status(), () -> first.result().toString());
        PushResult.OpError error = (PushResult.OpError) first.result().results().get(0);
        assertEquals(1, first.result().results().size());
        assertEquals(opIndex, error.opIndex());
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST.wire(), error.code());
        assertFalse(error.retryable(), "the same values would be refused again");
        PushResultDetails.Entry details = first.details().orElseThrow().entries().get(0);
        assertEquals(opIndex, details.opIndex());
        assertEquals(reason, details.details().reason());

        PushProcessor.Outcome replay = apply(commitId, ops);
        assertEquals(first.result(), replay.result(), "the replay answers the stored rejection");
        assertEquals(first.details(), replay.details());
        assertNothingWritten();
        PushProcessor.Outcome next = apply(commitId + "-next", upsert("fine", "p1", null));
        assertEquals(PushResult.Status.APPLIED, next.result().status(), "the next commit of the batch applies");
    }

    /** The rejected commit left nothing in the row table, the row scopes, the commit log or the changes. */
    private void assertNothingWritten() {
        assertEquals(0, storage.getMaxCommitSeq(partition));
        assertEquals(0, count("SELECT count(*) FROM \"tasks\" WHERE \"_sync_partition\" = ?"));
        assertEquals(0, count("SELECT count(*) FROM sync_row_scopes WHERE partition = ?"));
        assertEquals(0, count("SELECT count(*) FROM sync_commits WHERE partition = ?"));
        assertEquals(0, count("SELECT count(*) FROM sync_changes WHERE partition = ?"));
        assertEquals(0, count("SELECT count(*) FROM sync_change_scopes WHERE partition = ?"));
    }

    private long count(String sql) {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static String randomKey(int chars) {
        // random, so the btree's compression of a long key cannot shrink it below the entry limit
        Random r = new Random(42);
        StringBuilder sb = new StringBuilder(chars);
        for (int i = 0; i < chars; i++) sb.append((char) ('!' + r.nextInt(90)));
        return sb.toString();
    }

    @Test
    void aNulInTheRowIdRejectsTheCommit() {
        assertRejectedAndReplayed("nul-row", 1, "nul_character",
                upsert("ok", "p1", null), upsert("a\0b", "p1", null));
    }

    @Test
    void aNulInADeletedRowIdRejectsTheCommit() {
        assertRejectedAndReplayed("nul-delete", 1, "nul_character",
                upsert("ok", "p1", null), new PushCommit.Operation("tasks", "x\0", Op.DELETE, null, null));
    }

    @Test
    void aNulInAScopeValueRejectsTheCommit() {
        assertRejectedAndReplayed("nul-scope", 1, "nul_character",
                upsert("ok", "p1", null), upsert("s1", "p\0", null));
    }

    @Test
    void aKeyLargerThanABtreeEntryRejectsTheCommit() {
        assertRejectedAndReplayed("big-key", 0, "value_too_long", upsert(randomKey(6000), "p1", null));
        assertRejectedAndReplayed("big-scope", 0, "value_too_long", upsert("big-scope-row", randomKey(6000), null));
    }

    @Test
    void jsonWithAHugeExponentRejectsTheCommit() {
        assertRejectedAndReplayed("json-exp", 0, "json_number_out_of_range", upsert("j1", "p1", "{\"n\":1e999999}"));
        assertRejectedAndReplayed("json-neg", 0, "json_number_out_of_range", upsert("j2", "p1", "[1e-999999]"));
    }

    @Test
    void deeplyNestedJsonRejectsTheCommit() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        assertRejectedAndReplayed("json-deep", 0, "json_too_deep", upsert("j3", "p1", deep));
    }

    @Test
    void jsonWithinTheLimitsIsStored() {
        int inner = StorableInput.MAX_JSON_DEPTH - 1;   // inside the outer object
        String nested = "[".repeat(inner) + "]".repeat(inner);
        PushProcessor.Outcome o = apply("json-ok", upsert("j4", "p1", "{\"a\":" + nested + ",\"n\":1.5e300,"
                + "\"s\":\"\\u0000 stays in the payload\"}"));
        assertEquals(PushResult.Status.APPLIED, o.result().status(), () -> o.result().toString());
    }

    @Test
    void theDatabasesOwnRefusalOfAValueBecomesAStoredRejection() {
        // a storage whose row write binds a value PostgreSQL refuses (SQLSTATE 22021) where the rules above do
        // not look: the real refusal, classified and rolled back to the commit's savepoint
        ServerStorage refusing = refusingRowWrites(storage);
        PushCommit.Operation[] ops = {upsert("ok", "p1", null), upsert("refused", "p1", null)};
        PushProcessor.Outcome first = apply(refusing, "refused", ops);
        assertEquals(PushResult.Status.REJECTED, first.result().status());
        PushResult.OpError error = (PushResult.OpError) first.result().results().get(0);
        assertEquals(1, error.opIndex());
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST.wire(), error.code());
        assertEquals("database_refused_value", first.details().orElseThrow().entries().get(0).details().reason());
        assertEquals(first.result(), apply(storage, "refused", ops).result(), "replayed from the stored result");
        assertNothingWritten();
        assertEquals(PushResult.Status.APPLIED, apply(refusing, "after", upsert("ok", "p1", null)).result().status());
        assertTrue(Reads.row(storage, partition, "tasks", "ok").isPresent());
    }

    /** Delegates to {@code real}; an upsert of row "refused" is sent with a U+0000 in its projection's key. */
    private static ServerStorage refusingRowWrites(ServerStorage real) {
        return StorageHooks.transactionsThrough(real, tx -> StorageHooks.calls(tx, (method, args) -> {
            if (method.equals("upsertRow") && ((StoredRow) args[1]).rowId().equals("refused")) {
                args[1] = refused((StoredRow) args[1]);
            }
            if (method.equals("applyCommit")) {
                // the batched write path: the same refusal inside the commit's one round trip
                args[0] = ((List<?>) args[0]).stream().map(w -> w instanceof RowWrite.Upsert u
                        && u.row().rowId().equals("refused")
                        ? new RowWrite.Upsert(u.table(), refused(u.row()), u.opIndex()) : w).toList();
            }
        }));
    }

    private static StoredRow refused(StoredRow r) {
        return new StoredRow("refused\0", r.serverVersion(), r.scopes(), r.payload());
    }
}

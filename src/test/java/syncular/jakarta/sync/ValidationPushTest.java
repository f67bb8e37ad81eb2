package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.CommitValidator;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.RowValidator;
import syncular.jakarta.host.ValidatedOperation;
import syncular.jakarta.host.ValidationContext;
import syncular.jakarta.host.ValidationRejection;
import syncular.jakarta.host.ValidationRow;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RejectionDetails;

/**
 * §6.7/§6.8 validators through the real push pipeline on embedded PostgreSQL: the order decode → scope auth (incl.
 * strip) → validator → write, host codes and details stored and replayed, other throws and failed reads as
 * {@code sync.constraint_violation}, and the transaction-bound reads (staged writes visible, partition-bound SQL).
 */
class ValidationPushTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;

    private final List<RowValidator> rowValidators = new CopyOnWriteArrayList<>();
    private final List<CommitValidator> commitValidators = new CopyOnWriteArrayList<>();
    private PushProcessor push;
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
    void fresh() {
        rowValidators.clear();
        commitValidators.clear();
        push = new PushProcessor(storage, () -> 1_000L, new Validation(() -> rowValidators, () -> commitValidators), 1000);
        partition = EmbeddedPostgresSupport.partition("val");
    }

    private PushProcessor.Outcome apply(String commitId, PushCommit.Operation... ops) {
        return applyAs("actor-1", commitId, ops);
    }

    private PushProcessor.Outcome applyAs(String actor, String commitId, PushCommit.Operation... ops) {
        return Pushes.one(push, new PushProcessor.RequestScope(new Identity(actor, partition), "client-1", 2),
                SCHEMA, ALL, new PushCommit(commitId, List.of(ops)));
    }

    private static PushCommit.Operation upsert(String id, String project, String title) {
        return new PushCommit.Operation("tasks", id, Op.UPSERT, null,
                TestSchemas.taskPayload(SCHEMA, id, project, title, false));
    }

    private static PushCommit.Operation delete(String id) {
        return new PushCommit.Operation("tasks", id, Op.DELETE, null, null);
    }

    private RowValidator rowRule(BiConsumer<ValidatedOperation, ValidationContext> rule) {
        RowValidator v = new RowValidator() {
            @Override public boolean handles(String table) { return table.equals("tasks"); }

            @Override public void validate(ValidatedOperation op, ValidationContext ctx) { rule.accept(op, ctx); }
        };
        rowValidators.add(v);
        return v;
    }

    private static PushResult.OpError onlyError(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        assertEquals(1, o.result().results().size());
        return (PushResult.OpError) o.result().results().get(0);
    }

    @Test
    void hostRejectionCarriesCodeAndDetailsIsStoredAndReplayedWithoutRerunning() {
        AtomicInteger calls = new AtomicInteger();
        rowRule((op, ctx) -> {
            calls.incrementAndGet();
            if (op.row().get("title") instanceof String t && t.length() > 5) {
                throw new ValidationRejection("app.title_too_long", "title too long",
                        new RejectionDetails(List.of("title"), "max_length_exceeded", "edit_fields", null));
            }
        });
        PushProcessor.Outcome first = apply("c1", upsert("a", "p1", "ok"), upsert("b", "p1", "far too long"));
        PushResult.OpError error = onlyError(first);
        assertEquals(1, error.opIndex());
        assertEquals("app.title_too_long", error.code());
        assertFalse(error.retryable());
        assertEquals("{\"fieldPaths\":[\"title\"],\"reason\":\"max_length_exceeded\",\"requiredAction\":\"edit_fields\"}",
                first.details().orElseThrow().entries().get(0).details().toJson());
        assertEquals(1, first.details().get().entries().get(0).opIndex());
        // the commit rolled back as a whole: the accepted sibling is not written
        assertTrue(Reads.row(storage, partition, "tasks", "a").isEmpty());
        assertEquals(2, calls.get());

        PushProcessor.Outcome replay = apply("c1", upsert("a", "p1", "ok"), upsert("b", "p1", "far too long"));
        assertEquals(first.result(), replay.result());
        assertEquals(first.details(), replay.details());
        assertEquals(2, calls.get(), "a replay returns the stored outcome and runs no validator");
    }

    @Test
    void validatorSeesPostStripRowStoredRowAndNoAbsentDelete() {
        List<ValidatedOperation> seen = new ArrayList<>();
        rowRule((op, ctx) -> {
            seen.add(op);
            assertEquals("actor-1", ctx.actorId());
            assertEquals(partition, ctx.partition());
        });
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", "p1", "one")).result().status());
        // an update that tries to move the row to another scope: the validator sees the stripped (stored) scope
        assertEquals(PushResult.Status.APPLIED, apply("c2", upsert("a", "p2", "two"), delete("nobody"), delete("a"))
                .result().status());
        assertEquals(3, seen.size(), "the delete of an absent row runs no validator (§6.7)");
        ValidatedOperation insert = seen.get(0);
        assertNull(insert.stored());
        assertEquals(1L, insert.nextServerVersion());
        assertEquals("one", insert.row().get("title"));
        ValidatedOperation update = seen.get(1);
        assertEquals("p1", update.row().get("project_id"), "post-strip: scope columns keep the stored value");
        assertEquals("two", update.row().get("title"));
        assertEquals("one", update.stored().get("title"));
        assertEquals(1L, update.storedServerVersion());
        assertEquals(2L, update.nextServerVersion());
        ValidatedOperation del = seen.get(2);
        assertEquals(2, del.opIndex());
        assertTrue(del.delete());
        assertEquals("delete", del.op());
        assertNull(del.row());
        assertEquals("two", del.stored().get("title"));
    }

    @Test
    void validatorRunsAfterScopeAuthorization() {
        AtomicInteger calls = new AtomicInteger();
        rowRule((op, ctx) -> calls.incrementAndGet());
        PushProcessor.Outcome o = Pushes.one(push, new PushProcessor.RequestScope(new Identity("actor-1", partition),
                "client-1", 2), SCHEMA, Map.of("project_id", List.of("p1")),
                new PushCommit("c1", List.of(upsert("a", "p9", "x"))));
        assertEquals(ErrorCode.SYNC_FORBIDDEN.wire(), onlyError(o).code());
        assertEquals(0, calls.get(), "a validator never sees a row the actor may not write (§6.7)");
    }

    @Test
    void unexpectedThrowIsConstraintViolationWithoutDetails() {
        rowRule((op, ctx) -> {
            throw new IllegalStateException("secret internal message");
        });
        PushProcessor.Outcome o = apply("c1", upsert("a", "p1", "x"));
        PushResult.OpError e = onlyError(o);
        assertEquals("sync.constraint_violation", e.code());
        assertFalse(e.message().contains("secret"));
        assertTrue(o.details().isEmpty());
    }

    @Test
    void aRowValidatorAlwaysRejectsTheOperationItValidates() {
        rowRule((op, ctx) -> {
            if (op.rowId().equals("b")) throw ValidationRejection.ofOperation(0, "app.elsewhere", "blames op 0", null);
        });
        PushResult.OpError e = onlyError(apply("c1", upsert("a", "p1", "x"), upsert("b", "p1", "y")));
        assertEquals(1, e.opIndex());
        assertEquals("app.elsewhere", e.code());
    }

    @Test
    void reservedHostCodesAreRefusedAtConstruction() {
        for (String code : List.of("sync.x", "blob.x", "operation.x", "presence.x", "client.x", " ")) {
            assertThrows(IllegalArgumentException.class, () -> new ValidationRejection(code, "m"));
        }
        assertThrows(IllegalArgumentException.class, () -> ValidationRejection.ofOperation(-1, "app.x", "m", null));
        assertEquals("app.sync.x", new ValidationRejection("app.sync.x", "m").code());
    }

    @Test
    void readsSeeStagedWritesAndSqlIsBoundToThePartition() {
        // another partition holds a row with the same id and more rows: the SQL must never see them
        String mine = partition;
        partition = EmbeddedPostgresSupport.partition("other");
        apply("o1", upsert("a", "p1", "theirs"), upsert("z1", "p1", "x"), upsert("z2", "p1", "x"));
        partition = mine;

        List<Object> observed = new ArrayList<>();
        rowRule((op, ctx) -> {
            if (!op.rowId().equals("b")) return;
            ValidationRow a = ctx.getRow("tasks", "a").orElseThrow();
            observed.add(a.get("title"));
            observed.add(a.scopes());
            observed.add(ctx.scanRows("tasks", Map.of("project_id", List.of("p1"))).stream()
                    .map(ValidationRow::rowId).toList());
            observed.add(ctx.query("SELECT count(*) AS n, max(title) AS t FROM tasks WHERE project_id = ?",
                    List.of("p1")));
            observed.add(ctx.query("WITH x AS (SELECT t.id FROM \"tasks\" t) SELECT id FROM x -- c\nORDER BY id",
                    List.of()));
        });
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", "p1", "staged"), upsert("b", "p1", "b"))
                .result().status());
        assertEquals("staged", observed.get(0), "getRow sees the write staged by operation 0");
        assertEquals(Map.of("project_id", "p1"), observed.get(1));
        assertEquals(List.of("a"), observed.get(2), "the scan sees staged rows of this partition only");
        assertEquals(List.of(Map.of("n", 1L, "t", "staged")), observed.get(3));
        assertEquals(List.of(Map.of("id", "a")), observed.get(4));
    }

    @Test
    void literalsAndCommentsNeverSplitOrUnbindTheQuery() {
        String mine = partition;
        partition = EmbeddedPostgresSupport.partition("other");
        apply("o1", upsert("x1", "p1", "theirs"));
        partition = mine;
        List<Object> observed = new ArrayList<>();
        rowRule((op, ctx) -> {
            if (!op.rowId().equals("b")) return;  // "a" is staged by then, "b" not yet (validate precedes write)
            // ';' inside a literal, an E'' literal, a dollar quote and comments is no second statement; the table
            // named in upper case and quoted is still bound to the partition
            observed.add(ctx.query("SELECT count(*) AS n FROM TASKS /* ; */ WHERE title <> ';' AND title <> E'\\';' "
                    + "AND title <> $q$;$q$ -- ;\n AND id IN (SELECT id FROM \"tasks\")", List.of()));
        });
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", "p1", "x"), upsert("b", "p1", "y"))
                .result().status());
        assertEquals(List.of(List.of(Map.of("n", 1L))), observed);
    }

    @Test
    void failedReadRejectsEvenWhenTheValidatorSwallowsItAndTheRejectionIsStored() {
        rowRule((op, ctx) -> {
            try {
                ctx.query("SELECT no_such_column FROM tasks", List.of());
            } catch (RuntimeException swallowed) {
                // a validator that ignores the failure must not commit on an aborted transaction
            }
        });
        PushProcessor.Outcome o = apply("c1", upsert("a", "p1", "x"));
        assertEquals("sync.constraint_violation", onlyError(o).code());
        assertEquals(o.result(), apply("c1", upsert("a", "p1", "x")).result(), "the rejection was stored");
    }

    /**
     * A transient database failure in a validator read (here a serialization failure, SQLSTATE 40001, raised on the
     * first call only) is no verdict on the commit: the transaction rolls back, nothing is stored, the caller gets a
     * retryable storage failure, and the client's next push of the same commit is validated afresh and applies.
     */
    @Test
    void aTransientReadFailureIsRetryableAndNeverStoredAsARejection() throws Exception {
        try (java.sql.Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE SEQUENCE IF NOT EXISTS flaky_calls");
            s.execute("""
                    CREATE OR REPLACE FUNCTION flaky_read() RETURNS int LANGUAGE plpgsql AS $$
                    BEGIN
                      IF nextval('flaky_calls') = 1 THEN
                        RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
                      END IF;
                      RETURN 1;
                    END $$""");
        }
        AtomicInteger calls = new AtomicInteger();
        rowRule((op, ctx) -> {
            calls.incrementAndGet();
            try {
                ctx.query("SELECT flaky_read() AS n", List.of());
            } catch (RuntimeException swallowed) {
                // even a validator that swallows the failure must not turn it into a verdict
            }
        });
        syncular.jakarta.storage.StorageException e = assertThrows(syncular.jakarta.storage.StorageException.class,
                () -> apply("c1", upsert("a", "p1", "x")));
        assertTrue(e.code().retryable(), e.code().code());
        assertTrue(Reads.pushResult(storage, partition, "client-1", "c1").isEmpty(), "no rejection was stored");
        assertTrue(Reads.row(storage, partition, "tasks", "a").isEmpty());

        PushProcessor.Outcome retried = apply("c1", upsert("a", "p1", "x"));
        assertEquals(PushResult.Status.APPLIED, retried.result().status(), "the same commit applies on retry");
        assertEquals(2, calls.get(), "the retry ran the validator again");
    }

    @Test
    void badReadsFailLoudly() {
        List<String> sqls = List.of("DELETE FROM tasks", "SELECT 1; SELECT 2",
                "WITH d AS (DELETE FROM tasks RETURNING id) SELECT id FROM d");
        for (String sql : sqls) {
            rowValidators.clear();
            rowRule((op, ctx) -> ctx.query(sql, List.of()));
            assertEquals("sync.constraint_violation", onlyError(apply("q-" + sql.hashCode(),
                    upsert("a", "p1", "x"))).code(), sql);
        }
        rowValidators.clear();
        rowRule((op, ctx) -> ctx.scanRows("tasks", Map.of("project_id", List.of("p1")), null, 1001));
        assertEquals("sync.constraint_violation", onlyError(apply("s1", upsert("a", "p1", "x"))).code());
        rowValidators.clear();
        rowRule((op, ctx) -> ctx.scanRows("tasks", Map.of()));
        assertEquals("sync.constraint_violation", onlyError(apply("s2", upsert("a", "p1", "x"))).code());
        rowValidators.clear();
        rowRule((op, ctx) -> ctx.getRow("nope", "a"));
        assertEquals("sync.constraint_violation", onlyError(apply("s3", upsert("a", "p1", "x"))).code());
        assertTrue(Reads.row(storage, partition, "tasks", "a").isEmpty());
    }

    @Test
    void commitValidatorSeesEveryOperationOnceAndItsRejectionRollsBackAll() {
        List<CommitValidator.Commit> seen = new ArrayList<>();
        List<Object> reads = new ArrayList<>();
        commitValidators.add((commit, ctx) -> {
            seen.add(commit);
            reads.add(ctx.getRow("tasks", "b").map(r -> r.get("title")).orElse(null));
            if (commit.operations().stream().anyMatch(o -> "bad".equals(o.row() == null ? null : o.row().get("title")))) {
                throw ValidationRejection.ofOperation(1, "app.aggregate", "needs a sibling",
                        new RejectionDetails(List.of("title"), "missing_sibling_operation", "repair_aggregate", null));
            }
        });
        PushProcessor.Outcome ok = apply("c1", upsert("a", "p1", "x"), delete("absent"), upsert("b", "p1", "y"));
        assertEquals(PushResult.Status.APPLIED, ok.result().status());
        assertEquals(1, seen.size());
        List<ValidatedOperation> ops = seen.get(0).operations();
        assertEquals(3, ops.size());
        assertEquals(List.of(0, 1, 2), ops.stream().map(ValidatedOperation::opIndex).toList());
        assertTrue(ops.get(1).delete());
        assertNull(ops.get(1).stored(), "the absent-row delete is evidence with no stored row (§6.8)");
        assertEquals("client-1", seen.get(0).clientId());
        assertEquals("c1", seen.get(0).clientCommitId());
        assertEquals("y", reads.get(0), "the commit validator reads the final candidate state");

        PushProcessor.Outcome rejected = apply("c2", upsert("c", "p1", "bad"), upsert("b", "p1", "changed"));
        PushResult.OpError e = onlyError(rejected);
        assertEquals(1, e.opIndex());
        assertEquals("app.aggregate", e.code());
        assertEquals(1, rejected.details().orElseThrow().entries().get(0).opIndex());
        assertTrue(Reads.row(storage, partition, "tasks", "c").isEmpty());
        assertArrayEquals(TestSchemas.taskPayload(SCHEMA, "b", "p1", "y", false),
                Reads.row(storage, partition, "tasks", "b").orElseThrow().payload());
        assertEquals(2, seen.size());
        apply("c2", upsert("c", "p1", "bad"), upsert("b", "p1", "changed"));
        assertEquals(2, seen.size(), "never rerun on replay (§6.8)");

        // an operation that terminates first: the commit validator does not run
        rowRule((op, ctx) -> {
            throw new ValidationRejection("app.row", "no");
        });
        assertEquals("app.row", onlyError(apply("c3", upsert("d", "p1", "x"))).code());
        assertEquals(2, seen.size());
    }

    @Test
    void commitValidatorBlamingNoOperationIsConstraintViolation() {
        commitValidators.add((commit, ctx) -> {
            throw new ValidationRejection("app.x", "no opIndex");
        });
        PushResult.OpError e = onlyError(apply("c1", upsert("a", "p1", "x")));
        assertEquals("sync.constraint_violation", e.code());
        commitValidators.clear();
        commitValidators.add((commit, ctx) -> {
            throw ValidationRejection.ofOperation(5, "app.x", "out of range", null);
        });
        assertEquals("sync.constraint_violation", onlyError(apply("c2", upsert("a", "p1", "x"))).code());
    }

    @Test
    void inactiveValidatorsCostNothing() {
        AtomicInteger asked = new AtomicInteger();
        rowValidators.add(new RowValidator() {
            @Override public boolean handles(String table) {
                asked.incrementAndGet();
                return false;
            }

            @Override public void validate(ValidatedOperation op, ValidationContext ctx) {
                throw new AssertionError("never called");
            }
        });
        commitValidators.add(new CommitValidator() {
            @Override public boolean active() { return false; }

            @Override public void validate(Commit commit, ValidationContext ctx) {
                throw new AssertionError("never called");
            }
        });
        assertEquals(PushResult.Status.APPLIED, apply("c1", upsert("a", "p1", "x")).result().status());
        assertEquals(1, asked.get());
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.ScopeFilter;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SparseRowCodec;
import syncular.jakarta.wire.WireVersion;

/**
 * Declared references (SPEC §6.11 at 008c36d5, WIRE3-DELTA §5) through the real push pipeline on PostgreSQL: the
 * server-observable half of the later catalog's references scenarios (B.19), for wire 2 and wire 3 alike, and the
 * rules this server adds so a reference never crosses scope values.
 */
class DeclaredReferencesTest {
    private static final CompiledSchema SCHEMA = SchemaCompiler.compile("""
            {"version": 1, "tables": [
              {"name": "projects", "primaryKey": "id",
               "columns": [{"name": "id", "type": "string", "nullable": false},
                           {"name": "org_id", "type": "string", "nullable": false},
                           {"name": "name", "type": "string", "nullable": true}],
               "scopes": [{"pattern": "org:{org_id}"}]},
              {"name": "items", "primaryKey": "id",
               "columns": [{"name": "id", "type": "string", "nullable": false},
                           {"name": "org_id", "type": "string", "nullable": false},
                           {"name": "owner", "type": "string", "nullable": true},
                           {"name": "holder", "type": "string", "nullable": true},
                           {"name": "pin", "type": "string", "nullable": true},
                           {"name": "title", "type": "string", "nullable": true}],
               "scopes": [{"pattern": "org:{org_id}"}],
               "references": [{"column": "owner", "parentTable": "projects", "onDelete": "CASCADE"},
                              {"column": "holder", "parentTable": "projects", "onDelete": "SET NULL"},
                              {"column": "pin", "parentTable": "projects"}]},
              {"name": "notes", "primaryKey": "id",
               "columns": [{"name": "id", "type": "string", "nullable": false},
                           {"name": "org_id", "type": "string", "nullable": false},
                           {"name": "item", "type": "string", "nullable": false}],
               "scopes": [{"pattern": "org:{org_id}"}],
               "references": [{"column": "item", "parentTable": "items", "onDelete": "CASCADE"}]}]}""");
    private static final TableSchema PROJECTS = SCHEMA.table("projects").orElseThrow();
    private static final TableSchema ITEMS = SCHEMA.table("items").orElseThrow();
    private static final TableSchema NOTES = SCHEMA.table("notes").orElseThrow();
    private static final Map<String, List<String>> ALL = Map.of("org_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private final List<RowValidator> rowValidators = new CopyOnWriteArrayList<>();
    private final List<CommitValidator> commitValidators = new CopyOnWriteArrayList<>();
    private String partition;
    private int commits;
    private int cap = 1000;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
    }

    @AfterAll
    static void close() { db.close(); }

    @BeforeEach
    void fresh() { partition = EmbeddedPostgresSupport.partition("refs"); }

    private PushProcessor.Outcome push(int wire, PushCommit.Operation... ops) {
        PushProcessor processor = new PushProcessor(storage, () -> 1_000L,
                new Validation(() -> rowValidators, () -> commitValidators), cap);
        return Pushes.one(processor, new PushProcessor.RequestScope(new Identity("actor-1", partition), "client-1",
                wire), SCHEMA, ALL, new PushCommit("c" + (++commits), List.of(ops)));
    }

    private PushProcessor.Outcome push(PushCommit.Operation... ops) { return push(WireVersion.V2, ops); }

    private static PushCommit.Operation project(String id, String org) {
        return PushCommit.Operation.upsert("projects", id, null,
                RowCodec.encode(PROJECTS.descriptors(), new Object[] {id, org, "project " + id}));
    }

    private static PushCommit.Operation item(String id, String owner, String holder, String pin) {
        return PushCommit.Operation.upsert("items", id, null,
                RowCodec.encode(ITEMS.descriptors(), new Object[] {id, "o1", owner, holder, pin, "t"}));
    }

    private static PushCommit.Operation note(String id, String item) {
        return PushCommit.Operation.upsert("notes", id, null,
                RowCodec.encode(NOTES.descriptors(), new Object[] {id, "o1", item}));
    }

    private static PushCommit.Operation delete(String table, String id) {
        return PushCommit.Operation.delete(table, id, null);
    }

    private static void applied(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.APPLIED, o.result().status(), () -> o.result().toString());
    }

    /** The rejection's record and its details JSON. */
    private static String violation(PushProcessor.Outcome o, int opIndex, String message) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        PushResult.OpError e = assertInstanceOf(PushResult.OpError.class, o.result().results().get(0));
        assertEquals("sync.reference_violation", e.code());
        assertEquals(message, e.message());
        assertFalse(e.retryable());
        assertEquals(opIndex, e.opIndex());
        PushResultDetails details = o.details().orElseThrow();
        assertEquals(opIndex, details.entries().get(0).opIndex());
        return details.entries().get(0).details().toJson();
    }

    private boolean exists(String table, String id) { return Reads.row(storage, partition, table, id).isPresent(); }

    @Test @Seed("B.19 missing-parent: a reference to an absent parent row is rejected with its details")
    void aReferenceToAnAbsentParentIsAMissingParentViolation() {
        applied(push(project("p1", "o1")));
        String details = violation(push(item("i0", "p1", null, null), item("i1", "p404", null, null)), 1,
                "declared reference names an absent parent row (§6.11)");
        assertEquals("{\"fieldPaths\":[\"owner\"],\"reason\":\"missing_parent\","
                + "\"references\":{\"parent\":\"projects\",\"row\":\"p404\"}}", details);
        assertFalse(exists("items", "i0"), "the whole commit rolled back");
        // a parent created earlier in the same commit counts
        applied(push(project("p2", "o1"), item("i2", "p2", "p2", "p2")));
    }

    @Test @Seed("§6.11 (this server): a parent in other scope values is no parent, so nothing links across them")
    void aParentInOtherScopeValuesIsMissing() {
        applied(push(project("p1", "other-org")));
        String details = violation(push(item("i1", "p1", null, null)), 0,
                "declared reference names an absent parent row (§6.11)");
        assertTrue(details.contains("\"missing_parent\""), details);
    }

    @Test @Seed("B.19 restrict-blocks and delete-together-passes-restrict")
    void restrictBlocksADeleteUnlessTheCommitRemovesTheChildrenToo() {
        applied(push(project("p1", "o1"), item("i1", null, null, "p1")));
        String details = violation(push(item("ok", null, null, null), delete("projects", "p1")), 1,
                "delete is blocked by a declared reference with ON DELETE RESTRICT (§6.11)");
        assertEquals("{\"reason\":\"restricted_delete\",\"references\":{\"child\":\"items\"}}", details);
        assertTrue(exists("projects", "p1"));
        applied(push(delete("items", "i1"), delete("projects", "p1")));
        assertFalse(exists("projects", "p1"));
        // B.19 child-after-parent-delete
        violation(push(item("i2", null, null, "p1")), 0, "declared reference names an absent parent row (§6.11)");
    }

    @Test @Seed("B.19 cascade: children deleted recursively, each with its change and tombstone")
    void cascadeDeletesChildrenRecursively() {
        applied(push(project("p1", "o1"), project("p2", "o1"), item("i1", "p1", null, null),
                item("i2", "p1", null, null), item("i3", "p2", null, null), note("n1", "i1"), note("n2", "i2")));
        long before = storage.getMaxCommitSeq(partition);
        PushProcessor.Outcome o = push(WireVersion.V3, delete("projects", "p1"));
        applied(o);
        assertEquals(1, o.result().results().size(), "records for the client's operations only");
        assertFalse(exists("items", "i1") || exists("items", "i2") || exists("notes", "n1") || exists("notes", "n2"));
        assertTrue(exists("items", "i3") && exists("projects", "p2"));
        for (Map.Entry<String, List<String>> table : Map.of("projects", List.of("p1"), "items", List.of("i1", "i2"),
                "notes", List.of("n1", "n2")).entrySet()) {
            List<StoredChange> changes = Reads.window(storage, partition, new CommitWindowQuery(table.getKey(),
                    ScopeFilter.of("org_id", "o1"), before, before + 1, 10)).commits().get(0).changes();
            assertTrue(changes.stream().allMatch(c -> c.op() == ChangeOp.DELETE), changes::toString);
            assertEquals(table.getValue(), changes.stream().map(StoredChange::rowId).sorted().toList(),
                    "one delete change per cascaded row, in the client's commit");
        }
        // the cascaded deletes left tombstones: a wire-3 unversioned upsert of n1 is refused
        PushProcessor.Outcome again = push(WireVersion.V3, PushCommit.Operation.upsert("notes", "n1", null,
                SparseRowCodec.encode(NOTES.descriptors(), NOTES.primaryKeyIndex(), new boolean[] {true, true, true},
                        new Object[] {"n1", "o1", "i3"})));
        assertEquals("sync.row_deleted", assertInstanceOf(PushResult.OpError.class,
                again.result().results().get(0)).code());
    }

    @Test @Seed("B.19 set-null: the child stays, only its reference column moves, to version 2")
    void setNullDetachesTheChildAndMovesOnlyThatColumn() {
        applied(push(project("p1", "o1"), item("i1", null, "p1", null), note("n1", "i1")));
        applied(push(delete("projects", "p1")));
        StoredRow child = Reads.row(storage, partition, "items", "i1").orElseThrow();
        assertEquals(2, child.serverVersion());
        assertArrayEquals(new Object[] {"i1", "o1", null, null, null, "t"},
                RowCodec.decode(ITEMS.descriptors(), child.payload()));
        assertEquals(2, child.columnVersions().of(ITEMS.columnIndex("holder"), 2));
        assertEquals(1, child.columnVersions().of(ITEMS.columnIndex("title"), 2));
        assertTrue(exists("notes", "n1"), "a detached child is not deleted, so its own children stay");
    }

    @Test @Seed("B.19 cascade-limit: exactly cap appended operations pass, one more is rejected")
    void theCascadeCapBoundsAppendedOperations() {
        applied(push(project("p1", "o1"), item("i1", "p1", null, null), item("i2", "p1", null, null),
                item("i3", "p1", null, null), item("i4", "p1", null, null)));
        cap = 3;
        String details = violation(push(delete("projects", "p1")), 0,
                "declared-reference cascade exceeded the per-commit operation cap (§6.11)");
        assertEquals("{\"reason\":\"cascade_limit\"}", details);
        assertTrue(exists("items", "i1"));
        cap = 4;
        applied(push(delete("projects", "p1")));
        assertFalse(exists("items", "i4"));
    }

    @Test @Seed("§6.11: an appended operation's validator rejection is blamed on the client delete it comes from")
    void validatorsSeeAppendedOperationsAndBlameTheClientDelete() {
        applied(push(project("p1", "o1"), item("i1", "p1", null, null)));
        List<ValidatedOperation> seen = new CopyOnWriteArrayList<>();
        commitValidators.add((commit, context) -> seen.addAll(commit.operations()));
        rowValidators.add(new RowValidator() {
            @Override public boolean handles(String table) { return table.equals("items"); }

            @Override public void validate(ValidatedOperation op, ValidationContext context) {
                if (op.delete()) throw new ValidationRejection("app.keep_items", "items are kept");
            }
        });
        PushProcessor.Outcome o = push(item("other", null, null, null), delete("projects", "p1"));
        PushResult.OpError e = assertInstanceOf(PushResult.OpError.class, o.result().results().get(0));
        assertEquals("app.keep_items", e.code());
        assertEquals(1, e.opIndex(), "the client delete, not the appended index");
        assertTrue(exists("items", "i1"));
        rowValidators.clear();
        applied(push(item("other", null, null, null), delete("projects", "p1")));
        assertEquals(List.of(0, 1, 2), seen.stream().map(ValidatedOperation::opIndex).toList(),
                "the commit validator saw the appended delete at index 2");
        assertEquals("items", seen.get(2).table());
        assertTrue(seen.get(2).delete());
    }
}

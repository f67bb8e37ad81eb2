package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ColumnVersions;
import syncular.jakarta.storage.CommitPruneQuery;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.Seed;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ColumnBitmap;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SparseRowCodec;
import syncular.jakarta.wire.WireVersion;

/**
 * The wire-3 push rules (SPEC §6.2 at 008c36d5, WIRE3-DELTA §3 and §4) through the real push pipeline on PostgreSQL:
 * the server-observable half of the later catalog's sparse-rows (B.21) and delete-precedence (B.20) scenarios, and
 * the same table pushed to by a wire-2 client, whose row-level rules stay as 0.15.48 has them.
 */
class ColumnLevelWritesTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasksWith(1, "id", """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "title", "type": "string", "nullable": true},
            {"name": "done", "type": "boolean", "nullable": true},
            {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs"}""", "");
    private static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private PushProcessor push;
    private String partition;
    private int commits;

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
        push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
        partition = EmbeddedPostgresSupport.partition("w3");
    }

    private PushProcessor.Outcome push(int wire, String client, PushCommit.Operation... ops) {
        return Pushes.one(push, new PushProcessor.RequestScope(new Identity("actor-1", partition), client, wire),
                SCHEMA, ALL, new PushCommit("c" + (++commits), List.of(ops)));
    }

    private PushProcessor.Outcome v3(PushCommit.Operation... ops) { return push(WireVersion.V3, "client-3", ops); }

    /** A sparse payload of the named columns (insertion order irrelevant; the codec orders by declaration). */
    private static byte[] sparse(Map<String, Object> columns) {
        boolean[] present = new boolean[TASKS.columns().size()];
        Object[] values = new Object[present.length];
        columns.forEach((name, value) -> {
            int c = TASKS.columnIndex(name);
            present[c] = true;
            values[c] = value;
        });
        return SparseRowCodec.encode(TASKS.descriptors(), TASKS.primaryKeyIndex(), present, values);
    }

    private static PushCommit.Operation patch(String id, Long base, Object... nameValues) {
        Map<String, Object> columns = new LinkedHashMap<>();
        columns.put("id", id);
        for (int k = 0; k < nameValues.length; k += 2) columns.put((String) nameValues[k], nameValues[k + 1]);
        return PushCommit.Operation.upsert("tasks", id, base, sparse(columns));
    }

    private static PushCommit.Operation full(String id, Long base, String title, Boolean done) {
        return patch(id, base, "project_id", "p1", "title", title, "done", done, "doc", null);
    }

    /** The same full row in the wire-1/2 row codec. */
    private static PushCommit.Operation fullV2(String id, Long base, String title, Boolean done) {
        return PushCommit.Operation.upsert("tasks", id, base,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, "p1", title, done, null}));
    }

    private StoredRow row(String id) { return Reads.row(storage, partition, "tasks", id).orElseThrow(); }

    private Object[] values(String id) { return RowCodec.decode(TASKS.descriptors(), row(id).payload()); }

    private static void applied(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.APPLIED, o.result().status(), () -> o.result().toString());
    }

    private static PushResult.OpError error(PushProcessor.Outcome o, String code) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        PushResult.OpError e = assertInstanceOf(PushResult.OpError.class, o.result().results().get(0));
        assertEquals(code, e.code(), e.message());
        return e;
    }

    private static PushResult.Conflict conflict(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        return assertInstanceOf(PushResult.Conflict.class, o.result().results().get(0));
    }

    private static byte[] columns(String... names) {
        boolean[] marked = new boolean[TASKS.columns().size()];
        for (String n : names) marked[TASKS.columnIndex(n)] = true;
        return ColumnBitmap.of(marked.length, marked);
    }

    @Test @Seed("B.21a: disjoint unversioned patches both land")
    void disjointUnversionedPatchesBothLand() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", null, "title", "x")));
        applied(push(WireVersion.V3, "client-other", patch("t1", null, "done", true)));
        assertArrayEquals(new Object[] {"t1", "p1", "x", true, null}, values("t1"));
        assertEquals(3, row("t1").serverVersion());
    }

    @Test @Seed("B.21b: disjoint patches from the same base both land; B.21c: the same column conflicts")
    void patchesFromTheSameBaseConflictOnlyOnTheSameColumn() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", 1L, "title", "x")));
        applied(push(WireVersion.V3, "client-other", patch("t1", 1L, "done", true)));
        assertArrayEquals(new Object[] {"t1", "p1", "x", true, null}, values("t1"));
        PushProcessor.Outcome lost = push(WireVersion.V3, "client-late", patch("t1", 1L, "title", "y"));
        PushResult.Conflict c = conflict(lost);
        assertEquals("sync.version_conflict", c.code());
        assertEquals("present columns moved past baseVersion (§6.2)", c.message());
        assertEquals(3, c.serverVersion());
        assertArrayEquals(row("t1").payload(), c.serverRow(), "the full stored row");
        assertArrayEquals(columns("title"), c.conflictColumns());
        assertEquals("x", values("t1")[2], "nothing written");
    }

    @Test @Seed("§2.2 at wire 3: the present columns move to the new version, the key and the absent ones stay")
    void columnVersionsFollowThePresentColumns() {
        applied(v3(full("t1", null, "a", false)));
        assertEquals(ColumnVersions.NONE, row("t1").columnVersions(), "an insert puts every column at 1");
        applied(v3(patch("t1", 1L, "title", "x")));
        ColumnVersions v = row("t1").columnVersions();
        assertEquals(2, v.of(TASKS.columnIndex("title"), 2));
        assertEquals(1, v.of(TASKS.columnIndex("done"), 2));
        assertEquals(1, v.of(TASKS.columnIndex("id"), 2), "the key never moves");
        applied(v3(patch("t1", 2L, "done", true)));
        assertEquals(3, row("t1").columnVersions().of(TASKS.columnIndex("done"), 3));
        assertEquals(2, row("t1").columnVersions().of(TASKS.columnIndex("title"), 3));
    }

    @Test @Seed("B.21d: a CRDT-only patch never conflicts, whatever its base")
    void aCrdtOnlyPatchWithAStaleBaseDoesNotConflict() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", 1L, "title", "x")));
        // NULL clears the document (this server has no CRDT merger, so only the clear can be shown applying)
        applied(push(WireVersion.V3, "client-other", patch("t1", 1L, "doc", null)));
        assertEquals(3, row("t1").serverVersion());
        error(push(WireVersion.V3, "client-other", patch("t1", 1L, "doc", new byte[] {1})), "sync.crdt_merge_failed");
    }

    @Test @Seed("B.21e: a partial payload on an absent row is row_missing; baseVersion > 0 too, after authorization")
    void aPartialPayloadOnAnAbsentRowIsRowMissing() {
        error(v3(patch("t1", null, "title", "x")), "sync.row_missing");
        error(v3(patch("t1", 0L, "project_id", "p1", "title", "x")), "sync.row_missing");
        error(v3(patch("t1", 4L, "project_id", "p1", "title", "x")), "sync.row_missing");
        error(v3(patch("t1", 4L, "title", "x")), "sync.forbidden");
        assertTrue(Reads.row(storage, partition, "tasks", "t1").isEmpty());
    }

    @Test @Seed("B.21f: a present scope column that differs is invalid_request; an equal one is a no-op")
    void aChangedScopeColumnIsInvalidRequest() {
        applied(v3(full("t1", null, "a", false)));
        PushResult.OpError e = error(v3(patch("t1", 1L, "project_id", "p2", "title", "x")), "sync.invalid_request");
        assertEquals("scope column is immutable on update (§3.4)", e.message());
        assertEquals("a", values("t1")[2]);
        applied(v3(patch("t1", 1L, "project_id", "p1", "title", "x")));
        assertEquals("x", values("t1")[2]);
        assertEquals(Map.of("project_id", "p1"), row("t1").scopes());
    }

    @Test @Seed("§6.2 at wire 3: baseVersion above the stored version is invalid_request; 0 is a lost insert race")
    void aBaseAboveTheStoredVersionIsInvalidAndZeroConflictsOnEveryPresentColumn() {
        applied(v3(full("t1", null, "a", false)));
        error(v3(patch("t1", 2L, "title", "x")), "sync.invalid_request");
        PushResult.Conflict race = conflict(v3(full("t1", 0L, "b", true)));
        assertArrayEquals(columns("project_id", "title", "done"), race.conflictColumns(),
                "every present non-CRDT column but the key");
        assertEquals(1, row("t1").serverVersion());
    }

    @Test @Seed("B.21g/h: the present columns overlay the stored row, which is stored as the full-row encoding")
    void aPatchOverlaysTheStoredRowAndStoresTheFullRow() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", null, "title", "x")));
        assertArrayEquals(RowCodec.encode(TASKS.descriptors(), new Object[] {"t1", "p1", "x", false, null}),
                row("t1").payload(), "a full row, never the sparse bytes");
        // a present NULL clears the column; an absent one keeps its value
        applied(v3(patch("t1", null, "done", null)));
        assertArrayEquals(new Object[] {"t1", "p1", "x", null, null}, values("t1"));
    }

    @Test @Seed("B.20: a stale patch loses to a delete; an explicit insert recreates; a prune restores the insert rule")
    void aDeleteWinsOverAnUnversionedUpsertUntilPrunedAndAnExplicitInsertRecreates() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(PushCommit.Operation.delete("tasks", "t1", null)));
        PushResult.OpError deleted = error(push(WireVersion.V3, "client-other", full("t1", null, "stale", true)),
                "sync.row_deleted");
        assertEquals(false, deleted.retryable());
        error(v3(patch("t1", 1L, "project_id", "p1", "title", "stale")), "sync.row_missing");
        assertTrue(Reads.row(storage, partition, "tasks", "t1").isEmpty());

        applied(v3(full("t1", 0L, "again", false)));
        assertEquals(1, row("t1").serverVersion());
        applied(v3(PushCommit.Operation.delete("tasks", "t1", null)));
        String epoch = storage.touchPartition(partition, 1, "e-w3").logEpoch();
        storage.pruneCommitsThrough(partition, new CommitPruneQuery(epoch, storage.getMaxCommitSeq(partition)));
        applied(v3(full("t1", null, "after prune", false)));
        assertEquals("after prune", values("t1")[2]);
    }

    @Test @Seed("B.20 within one group: a commit's delete is seen by the next commit of the same request")
    void aDeleteEarlierInTheGroupBeatsAnUnversionedUpsertLaterInIt() {
        applied(v3(full("t1", null, "a", false)));
        PushProcessor.Pushed pushed = push.push(new PushProcessor.Batch(new PushProcessor.RequestScope(
                new Identity("actor-1", partition), "client-3", WireVersion.V3), SCHEMA, ALL, List.of(
                new PushCommit("g1", List.of(PushCommit.Operation.delete("tasks", "t1", null))),
                new PushCommit("g2", List.of(full("t1", null, "b", true))),
                new PushCommit("g3", List.of(full("t1", 0L, "c", true)))), underLock -> { }));
        applied(pushed.outcomes().get(0));
        error(pushed.outcomes().get(1), "sync.row_deleted");
        applied(pushed.outcomes().get(2));
        assertEquals("c", values("t1")[2]);
    }

    @Test @Seed("WIRE3-DELTA §10: a wire-2 client keeps 0.15.48's rules on the same rows")
    void aWire2ClientKeepsRowLevelRulesBesideAWire3One() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", 1L, "title", "x")));
        // row-level: a wire-2 push from base 1 conflicts even on a column nobody else touched; no columns on its wire
        PushResult.Conflict c = conflict(push(WireVersion.V2, "client-2", fullV2("t1", 1L, "a", true)));
        assertEquals("row version does not match baseVersion (§6.2)", c.message());
        applied(push(WireVersion.V2, "client-2", fullV2("t1", 2L, "x", true)));
        assertEquals(ColumnVersions.NONE, row("t1").columnVersions(), "a full-row write moves every column");
        // a wire-3 patch from the version before conflicts on the column the full row re-sent, and (the
        // reference's rule: a row with no column versions reads every column at its version) on the key
        assertArrayEquals(columns("id", "title"), conflict(v3(patch("t1", 2L, "title", "y"))).conflictColumns());
        // a wire-2 client changing a scope column is silently kept at the stored value, as 0.15.48 says
        applied(push(WireVersion.V2, "client-2", PushCommit.Operation.upsert("tasks", "t1", 3L,
                RowCodec.encode(TASKS.descriptors(), new Object[] {"t1", "p9", "z", true, null}))));
        assertEquals(Map.of("project_id", "p1"), row("t1").scopes());
        // and its unversioned upsert re-inserts a row deleted by anyone (documented in docs/wire-versions.md)
        applied(v3(PushCommit.Operation.delete("tasks", "t1", null)));
        applied(push(WireVersion.V2, "client-2", fullV2("t1", null, "back", false)));
        assertEquals("back", values("t1")[2]);
    }

    @Test @Seed("WIRE3-DELTA §10.7: a conflict decided under wire 2 replays under wire 3 with its columns")
    void aConflictStoredUnderWire2ReplaysUnderWire3WithItsColumns() {
        applied(v3(full("t1", null, "a", false)));
        applied(v3(patch("t1", 1L, "title", "x")));
        PushCommit commit = new PushCommit("same-id", List.of(fullV2("t1", 1L, "a", true)));
        PushProcessor.Outcome first = Pushes.one(push, new PushProcessor.RequestScope(new Identity("actor-1",
                partition), "client-up", WireVersion.V2), SCHEMA, ALL, commit);
        PushResult.Conflict recorded = conflict(first);
        assertArrayEquals(columns("title"), recorded.conflictColumns(), "computed whatever the wire version");
        PushProcessor.Outcome replay = Pushes.one(push, new PushProcessor.RequestScope(new Identity("actor-1",
                partition), "client-up", WireVersion.V3), SCHEMA, ALL,
                new PushCommit("same-id", List.of(patch("t1", 1L, "done", true))));
        assertArrayEquals(recorded.conflictColumns(), conflict(replay).conflictColumns(), "the stored decision");
    }
}

package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static syncular.jakarta.sync.BlobTasksDatabase.TASKS;
import static syncular.jakarta.sync.BlobTasksDatabase.upsert;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.RowKey;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.PostgresBlobStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RowCodec;

/**
 * §5.9.4/§5.9.6/§6.6 and §5.10.2 through the real push pipeline on PostgreSQL: a non-NULL {@code blob_ref} must name
 * a blob uploaded to the partition ({@code blob.not_found} otherwise, the commit rolled back whole, the rejection
 * stored and replayed), and an applied write keeps the reference index exactly the row's blobs, in the push's own
 * transaction (insert, change, clear, delete; staged group writes and eager single writes alike). Without a blob
 * store every reference is refused, as the reference server answers with none. CRDT values have no merger here:
 * every non-NULL {@code crdt} value is {@code sync.crdt_merge_failed}, never stored last-write-wins.
 */
class PushBlobCrdtTest {
    private static final Map<String, List<String>> ALL = Map.of("project_id", List.of("*"));
    private static final String MISSING = new BlobRef("sha256:" + "ab".repeat(32), 5, "text/plain", null).toJson();
    private static BlobTasksDatabase fixture;
    private static PostgresServerStorage storage;
    private static PostgresBlobStore blobs;
    private PushProcessor push;
    private PushProcessor storeless;
    private String partition;

    @BeforeAll
    static void database() {
        fixture = BlobTasksDatabase.open();
        storage = fixture.storage;
        blobs = fixture.blobs;
    }

    @AfterAll
    static void close() { fixture.close(); }

    @BeforeEach
    void fresh() {
        push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000, blobs);
        storeless = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
        partition = EmbeddedPostgresSupport.partition("blob");
    }

    /** Uploads {@code text} to this test's partition; its canonical BlobRef. */
    private String uploaded(String text) throws Exception {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        String id = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        assertEquals(BlobStore.PutOutcome.STORED, blobs.put(partition, id, new ByteArrayInputStream(bytes), 1 << 20,
                "text/plain", 1_000));
        return new BlobRef(id, bytes.length, "text/plain", "note.txt").toJson();
    }

    private PushProcessor.Outcome apply(PushProcessor processor, String commitId, PushCommit.Operation... ops) {
        return BlobTasksDatabase.push(processor, new Identity("actor-1", partition), ALL, commitId, ops);
    }

    private PushProcessor.Outcome apply(String commitId, PushCommit.Operation... ops) {
        return apply(push, commitId, ops);
    }

    private static PushResult.OpError rejection(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        assertEquals(1, o.result().results().size(), "only the terminating record");
        assertFalse(o.details().isPresent(), "no PUSH_RESULT_DETAILS");
        return assertInstanceOf(PushResult.OpError.class, o.result().results().get(0));
    }

    private static void applied(PushProcessor.Outcome o) {
        assertEquals(PushResult.Status.APPLIED, o.result().status(), () -> o.result().toString());
    }

    /** The reference index of the partition, as (rowId → blobIds). */
    private Map<String, Set<String>> index() {
        Map<String, Set<String>> out = new java.util.TreeMap<>();
        try (var c = fixture.db.getConnection(); var ps = c.prepareStatement(
                "SELECT row_id, blob_id FROM sync_blob_refs WHERE partition = ? AND tbl = 'tasks'")) {
            ps.setString(1, partition);
            try (var rs = ps.executeQuery()) {
                while (rs.next()) out.computeIfAbsent(rs.getString(1), k -> new java.util.TreeSet<>()).add(rs.getString(2));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private static String idOf(String ref) { return BlobRef.parse(ref).blobId(); }

    @Test
    void aBlobRefToAnUploadedBlobAppliesAndIsIndexedWithTheRowsScopes() throws Exception {
        String ref = uploaded("hello");
        applied(apply("c1", upsert("a", null, ref), upsert("b", null, ref, ref, null), upsert("n", null, null)));
        assertEquals(Map.of("a", Set.of(idOf(ref)), "b", Set.of(idOf(ref))), index(),
                "one entry per (row, blob), however many columns name it; none for a NULL");
        List<ServerStorage.BlobReference> refs = storage.blobReferences(partition, idOf(ref), null, 10);
        assertEquals(List.of(new ServerStorage.BlobReference("tasks", "a", Map.of("project_id", "p1")),
                new ServerStorage.BlobReference("tasks", "b", Map.of("project_id", "p1"))), refs);
        assertEquals(List.of("b"), storage.blobReferences(partition, idOf(ref), new RowKey("tasks", "a"), 10).stream()
                .map(ServerStorage.BlobReference::rowId).toList(), "keyset paging");
        assertEquals(Set.of(idOf(ref)), storage.referencedBlobIds(partition, List.of(idOf(ref), idOf(MISSING))));
        assertTrue(storage.blobReferences(EmbeddedPostgresSupport.partition("other"), idOf(ref), null, 10).isEmpty(),
                "the index is per partition");
    }

    @Test
    void aBlobRefToABlobNotUploadedIsBlobNotFoundAndRollsTheCommitBack() throws Exception {
        String ok = uploaded("present");
        PushProcessor.Outcome insert = apply("c1", upsert("ok", null, ok), upsert("a", null, ok, MISSING, null));
        PushResult.OpError e = rejection(insert);
        assertEquals(1, e.opIndex());
        assertEquals("blob.not_found", e.code());
        assertFalse(e.retryable());
        assertFalse(e.message().contains("sha256:"), "the message names no row data");
        assertTrue(Reads.row(storage, partition, "tasks", "ok").isEmpty(), "the whole commit rolled back");
        assertEquals(Map.of(), index(), "and its references with it");
        assertEquals(insert.result(), apply("c1", upsert("ok", null, ok), upsert("a", null, ok, MISSING, null))
                .result(), "the rejection is stored and replayed");

        applied(apply("c2", upsert("b", null, ok)));
        PushResult.OpError update = rejection(apply("c3", upsert("b", 1L, MISSING)));
        assertEquals(0, update.opIndex());
        assertEquals("blob.not_found", update.code());
        assertEquals(1, Reads.row(storage, partition, "tasks", "b").orElseThrow().serverVersion(), "row unchanged");
        assertEquals(Map.of("b", Set.of(idOf(ok))), index());
    }

    @Test
    void aBlobOfAnotherPartitionIsNotFoundHere() throws Exception {
        String ref = uploaded("mine");
        String mine = partition;
        partition = EmbeddedPostgresSupport.partition("blob");
        assertEquals("blob.not_found", rejection(apply("c1", upsert("a", null, ref))).code());
        partition = mine;
        applied(apply("c1", upsert("a", null, ref)));
    }

    @Test
    void anUpdateReplacesTheRowsReferencesAndADeleteClearsThem() throws Exception {
        String one = uploaded("one");
        String two = uploaded("two");
        applied(apply("c1", upsert("a", null, one, two, null), upsert("b", null, one)));
        assertEquals(Map.of("a", Set.of(idOf(one), idOf(two)), "b", Set.of(idOf(one))), index());
        applied(apply("c2", upsert("a", 1L, two, null, null)));
        assertEquals(Map.of("a", Set.of(idOf(two)), "b", Set.of(idOf(one))), index(), "the old blob's entry went");
        applied(apply("c3", upsert("a", 2L, null)));
        assertEquals(Map.of("b", Set.of(idOf(one))), index(), "an update to NULL clears it");
        applied(apply("c4", PushCommit.Operation.delete("tasks", "b", 1L)));
        assertEquals(Map.of(), index(), "a deleted row references no blob");
        applied(apply("c5", upsert("b", null, two), PushCommit.Operation.delete("tasks", "b", null)));
        assertEquals(Map.of(), index(), "a delete later in the same commit wins");
    }

    @Test
    void anEagerSingleRowWriteKeepsTheSameIndex() throws Exception {
        // the path validators and declared references take: one statement per write instead of the staged batch
        String one = uploaded("eager");
        byte[] payload = RowCodec.encode(TASKS.descriptors(), new Object[] {"e", "p1", one, null, null});
        storage.inTransaction(partition, tx -> {
            tx.upsertRow("tasks", new StoredRow("e", 1, Map.of("project_id", "p1"), payload), 0);
            return null;
        });
        assertEquals(Map.of("e", Set.of(idOf(one))), index());
        byte[] cleared = RowCodec.encode(TASKS.descriptors(), new Object[] {"e", "p1", null, null, null});
        storage.inTransaction(partition, tx -> {
            tx.upsertRow("tasks", new StoredRow("e", 2, Map.of("project_id", "p1"), cleared), 0);
            return null;
        });
        assertEquals(Map.of(), index());
    }

    @Test
    void aRowsFirstCommitKeepsTheSameIndex() throws Exception {
        // the backfill's path (issue 21): a new row's entries only inserted, a changed row's replaced
        String one = uploaded("first");
        String two = uploaded("second");
        applied(rowsFirst("r1", upsert("f", null, one, two, null), upsert("g", null, one)));
        assertEquals(Map.of("f", Set.of(idOf(one), idOf(two)), "g", Set.of(idOf(one))), index());
        applied(rowsFirst("r2", upsert("f", 1L, two)));
        assertEquals(Map.of("f", Set.of(idOf(two)), "g", Set.of(idOf(one))), index(), "the old blob's entry went");
    }

    private PushProcessor.Outcome rowsFirst(String commitId, PushCommit.Operation... ops) {
        PushProcessor.Batch batch = BlobTasksDatabase.batch(new Identity("actor-1", partition), ALL, commitId, ops);
        return Pushes.outcome(storage.inTransaction(partition, tx -> push.pushRowsFirst(tx, batch)));
    }

    @Test
    void withoutABlobStoreEveryBlobRefIsBlobNotFound() {
        PushResult.OpError e = rejection(apply(storeless, "c1", upsert("a", null, MISSING)));
        assertEquals("blob.not_found", e.code());
        assertTrue(e.message().contains("no blob store"), e.message());
        applied(apply(storeless, "c2", upsert("n", null, null)));
    }

    @Test
    void nullBlobRefAndNullCrdtAreOrdinaryWrites() {
        applied(apply("c1", upsert("a", null, null)));
        applied(apply("c2", upsert("a", 1L, null)));
        assertEquals(2, Reads.row(storage, partition, "tasks", "a").orElseThrow().serverVersion());
    }

    @Test
    void aCrdtValueWithNoMergerRegisteredIsCrdtMergeFailedNeverLastWriteWins() {
        PushResult.OpError insert = rejection(apply("c1", upsert("a", null, null, null, new byte[] {1, 2, 3})));
        assertEquals(0, insert.opIndex());
        assertEquals("sync.crdt_merge_failed", insert.code());
        assertFalse(insert.retryable());
        assertTrue(insert.message().contains("yjs"), insert.message());
        assertTrue(Reads.row(storage, partition, "tasks", "a").isEmpty());

        applied(apply("c2", upsert("b", null, null)));
        PushResult.OpError update = rejection(apply("c3", upsert("b", null, null, null, new byte[] {9})));
        assertEquals("sync.crdt_merge_failed", update.code());
        assertEquals(1, Reads.row(storage, partition, "tasks", "b").orElseThrow().serverVersion(), "not overwritten");
    }

    @Test
    void aVersionConflictIsReportedBeforeTheCrdtOrBlobCheck() {
        applied(apply("c1", upsert("a", null, null)));
        PushProcessor.Outcome o = apply("c2", upsert("a", 7L, MISSING, null, new byte[] {1}));
        assertEquals(PushResult.Status.REJECTED, o.result().status());
        assertInstanceOf(PushResult.Conflict.class, o.result().results().get(0));
    }

    @Test
    void theCrdtRefusalComesBeforeTheBlobCheckAsInTheReference() {
        PushResult.OpError e = rejection(apply("c1", upsert("a", null, MISSING, null, new byte[] {1})));
        assertEquals("sync.crdt_merge_failed", e.code());
    }
}

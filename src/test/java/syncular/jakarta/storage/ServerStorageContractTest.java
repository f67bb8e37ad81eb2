package syncular.jakarta.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import syncular.jakarta.schema.CompiledSchema;

/**
 * The storage contract (UPSTREAM-SERVER §2, seeds/001), written against {@link ServerStorage} only so another
 * backend can run it: a subclass supplies a storage whose schema is {@link #schema()} after
 * {@code ensureSchema}, and the runner that storage uses. Every test works in partitions of its own.
 */
public abstract class ServerStorageContractTest {
    protected abstract ServerStorage storage();

    private List<StoredCommit> window(String partition, CommitWindowQuery query) {
        return Reads.window(storage(), partition, query).commits();
    }

    protected abstract TransactionRunner runner();

    /**
     * Declares one checkpoint (its row and its fence, in one transaction) as a migration's {@code ensureSchema}
     * declares each; the backend's own way, since production declares through {@code ensureSchema} only.
     */
    protected abstract StoredCheckpoint declare(String partition, String name, int schemaVersion, long nowMs);

    /**
     * {@link TestSchemas#withReferences} at version 1 ({@link TestSchemas#tasks} plus referencing tables), already
     * ensured on {@link #storage()}.
     */
    protected CompiledSchema schema() { return TestSchemas.withReferences(1); }

    protected static String partition(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private StoredRow row(String id, String project, long version) {
        return TestSchemas.taskRow(schema(), id, project, version);
    }

    /** Upserts the rows and appends one commit with their changes; returns the commitSeq. */
    protected long push(String p, String commitId, StoredRow... rows) {
        return storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            List<StoredChange> changes = new ArrayList<>();
            for (int i = 0; i < rows.length; i++) {
                tx.upsertRow("tasks", rows[i], i);
                changes.add(StoredChange.upsert("tasks", rows[i].rowId(), rows[i].serverVersion(), rows[i].scopes(),
                        rows[i].payload()));
            }
            long seq = tx.appendCommit(new NewCommit("client-1", commitId, "actor-1", 1_000L + rows.length, changes));
            tx.putPushResult("client-1", commitId, StoredPushResult.applied(seq, List.of()));
            return seq;
        });
    }

    private static ScopeFilter projects(String... ids) { return ScopeFilter.of("project_id", ids); }

    // ------------------------------------------------------------- partitions

    @Test @Seed("SPEC §2.1 partition registry")
    void touchPartitionCreatesThenRefreshesKeepingTheEpoch() {
        String p = partition("reg");
        PartitionRegistryEntry first = storage().touchPartition(p, 10, "epoch-a");
        assertEquals(new PartitionRegistryEntry(p, "epoch-a", false, 10), first);
        // within the touch interval the activity time is only read (issue 14: a hot row otherwise)
        PartitionRegistryEntry soon = storage().touchPartition(p, 20, "epoch-b");
        assertEquals("epoch-a", soon.logEpoch());
        assertTrue(soon.lastAuthenticatedAtMs() == 10 || soon.lastAuthenticatedAtMs() == 20, soon.toString());
        PartitionRegistryEntry again = storage().touchPartition(p, 3_600_000, "epoch-b");
        assertEquals(new PartitionRegistryEntry(p, "epoch-a", false, 3_600_000), again);
        assertEquals(Optional.of("epoch-a"), storage().getPartitionLogEpoch(p));
        assertEquals(Optional.empty(), storage().getPartitionLogEpoch(partition("absent")));
        assertTrue(storage().listPartitionRegistry().contains(again));
    }

    @Test @Seed("SPEC §2.1 restore rotates the epoch")
    void rotatingTheEpochRequiresItAndDropsClientRecords() {
        String p = partition("rot");
        storage().touchPartition(p, 10, "e1");
        storage().putClientRecord(p, new ClientRecord("c1", "a", 2, 5, 10, List.of()));
        PartitionRegistryEntry rotated = storage().rotatePartitionLogEpoch(p, "e2", 30);
        assertEquals(new PartitionRegistryEntry(p, "e2", true, 30), rotated);
        assertEquals(Optional.of("e2"), storage().getPartitionLogEpoch(p));
        assertEquals(Optional.empty(), storage().getClientRecord(p, "c1"));
        assertTrue(storage().listClientCursors(p).isEmpty());
    }

    // ------------------------------------------------------------- commit log

    @Test @Seed("SPEC §2.1 dense commitSeq")
    void commitSeqsAreDensePerPartitionAndIndependentAcrossPartitions() {
        String a = partition("dense-a");
        String b = partition("dense-b");
        assertEquals(0, storage().getMaxCommitSeq(a));
        assertEquals(1, push(a, "c1", row("t1", "p1", 1)));
        assertEquals(2, push(a, "c2", row("t2", "p1", 1)));
        assertEquals(1, push(b, "c1", row("t1", "p1", 1)));
        assertEquals(3, push(a, "c3", row("t3", "p1", 1)));
        assertEquals(3, storage().getMaxCommitSeq(a));
        assertEquals(1, storage().getMaxCommitSeq(b));
    }

    @Test @Seed("SPEC §2.1: a rolled-back commit leaves no gap")
    void aRolledBackAppendLeavesNoGap() {
        String p = partition("gap");
        push(p, "c1", row("t1", "p1", 1));
        assertThrows(IllegalStateException.class, () -> storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row("t2", "p1", 1), 0);
            tx.appendCommit(TestSchemas.upsertCommit("c2", row("t2", "p1", 1)));
            throw new IllegalStateException("infrastructure failure after the append");
        }));
        assertEquals(1, storage().getMaxCommitSeq(p));
        assertEquals(Optional.empty(), Reads.row(storage(), p, "tasks", "t2"));
        assertEquals(2, push(p, "c3", row("t3", "p1", 1)));
    }

    @Test @Seed("SPEC §4.5 commit window")
    void commitWindowReturnsOnlyMatchingChangesInTheWindowOldestFirst() {
        String p = partition("window");
        push(p, "c1", row("a1", "p1", 1));                       // 1
        push(p, "c2", row("b1", "p2", 1));                       // 2: other project
        push(p, "c3", row("a2", "p1", 1), row("b2", "p2", 1));   // 3: one matching change of two
        push(p, "c4", row("a3", "p1", 1));                       // 4
        List<StoredCommit> all = window(p, new CommitWindowQuery("tasks", projects("p1"), 0, 4,
                100));
        assertEquals(List.of(1L, 3L, 4L), all.stream().map(StoredCommit::commitSeq).toList());
        assertEquals(List.of("a2"), all.get(1).changes().stream().map(StoredChange::rowId).toList());
        StoredChange ch = all.get(0).changes().get(0);
        assertEquals(ChangeOp.UPSERT, ch.op());
        assertEquals(1L, ch.rowVersion());
        assertEquals(Map.of("project_id", "p1"), ch.scopes());
        assertArrayEquals(row("a1", "p1", 1).payload(), ch.payload());
        assertEquals("actor-1", all.get(0).actorId());
        List<StoredCommit> window = window(p, new CommitWindowQuery("tasks", projects("p1"), 1, 3,
                100));
        assertEquals(List.of(3L), window.stream().map(StoredCommit::commitSeq).toList());
        List<StoredCommit> both = window(p, new CommitWindowQuery("tasks", projects("p1", "p2"),
                0, 4, 100));
        assertEquals(List.of(1L, 2L, 3L, 4L), both.stream().map(StoredCommit::commitSeq).toList());
        assertEquals(2, both.get(2).changes().size());
    }

    @Test @Seed("SPEC §4.2 limitCommits counts changes and never splits a commit")
    void commitWindowStopsAtTheLimitWithoutSplittingACommit() {
        String p = partition("limit");
        push(p, "c1", row("a1", "p1", 1), row("a2", "p1", 1), row("a3", "p1", 1));
        push(p, "c2", row("a4", "p1", 1));
        push(p, "c3", row("a5", "p1", 1));
        List<StoredCommit> first = window(p, new CommitWindowQuery("tasks", projects("p1"), 0, 3,
                2));
        assertEquals(List.of(1L), first.stream().map(StoredCommit::commitSeq).toList(), "the oversized commit alone");
        assertEquals(3, first.get(0).changes().size());
        List<StoredCommit> next = window(p, new CommitWindowQuery("tasks", projects("p1"), 1, 3,
                1));
        assertEquals(List.of(2L), next.stream().map(StoredCommit::commitSeq).toList());
    }

    @Test @Seed("SPEC §3.2 variables are independent dimensions")
    void commitWindowVerifiesEveryFilteredVariable() {
        String p = partition("multi");
        push(p, "c1", row("a1", "p1", 1));
        ScopeFilter twoVars = new ScopeFilter(Map.of("project_id", List.of("p1"), "zzz", List.of("x")));
        assertTrue(window(p, new CommitWindowQuery("tasks", twoVars, 0, 1, 10)).isEmpty());
        assertThrows(StorageException.class, () -> window(p,
                new CommitWindowQuery("tasks", new ScopeFilter(Map.of()), 0, 1, 10)));
    }

    @Test @Seed("SPEC §2.2: a delete carries the row's scopes and no payload")
    void deletesAreLoggedWithScopesAndRemoveTheRow() {
        String p = partition("delete");
        push(p, "c1", row("a1", "p1", 1));
        long seq = storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.deleteRow("tasks", "a1");
            tx.deleteRow("tasks", "never-existed");
            return tx.appendCommit(new NewCommit("client-1", "c2", "actor-1", 5,
                    List.of(StoredChange.delete("tasks", "a1", Map.of("project_id", "p1")))));
        });
        assertEquals(Optional.empty(), Reads.row(storage(), p, "tasks", "a1"));
        StoredChange del = window(p, new CommitWindowQuery("tasks", projects("p1"), 1, seq, 10))
                .get(0).changes().get(0);
        assertEquals(ChangeOp.DELETE, del.op());
        assertEquals(null, del.payload());
        assertEquals(null, del.rowVersion());
        assertTrue(Reads.scan(storage(), p, new RowScanQuery("tasks", projects("p1"), null, 10)).isEmpty());
    }

    @Test
    void commitSeqBeforeATimeIsTheNewestStrictlyEarlierCommit() {
        String p = partition("before");
        push(p, "c1", row("a1", "p1", 1));                       // created 1001
        push(p, "c2", row("a2", "p1", 1), row("a3", "p1", 1));   // created 1002
        assertEquals(0, storage().getCommitSeqBefore(p, 1001));
        assertEquals(1, storage().getCommitSeqBefore(p, 1002));
        assertEquals(2, storage().getCommitSeqBefore(p, 5000));
    }

    // -------------------------------------------------------------------- rows

    @Test @Seed("issue 21: a catch-up batch reads its changed rows at once")
    void manyRowsAreReadAtOnceWithTheTransactionsOwnWritesAndWithoutTheMissingOnes() {
        String p = partition("rows-many");
        push(p, "c1", row("m1", "p1", 1));
        push(p, "c2", row("m2", "p1", 1));
        storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row("m3", "p2", 1), 0);
            List<StoredRow> rows = tx.getRows("tasks", List.of("m1", "m3", "missing"));
            assertEquals(java.util.Set.of("m1", "m3"), rows.stream().map(StoredRow::rowId)
                    .collect(java.util.stream.Collectors.toSet()), "existing rows only, staged writes included");
            assertEquals(List.of(), tx.getRows("tasks", List.of()));
            return null;
        });
    }

    @Test @Seed("SPEC §2.2 current rows")
    void rowsRoundTripAndATransactionReadsItsOwnWrites() {
        String p = partition("rows");
        StoredRow r = row("a1", "p1", 1);
        storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", r, 0);
            StoredRow seen = tx.getRow("tasks", "a1").orElseThrow();
            assertArrayEquals(r.payload(), seen.payload());
            assertEquals(1, tx.scanRows(new RowScanQuery("tasks", projects("p1"), null, 10)).size());
            return tx.appendCommit(TestSchemas.upsertCommit("c1", r));
        });
        StoredRow stored = Reads.row(storage(), p, "tasks", "a1").orElseThrow();
        assertEquals(1, stored.serverVersion());
        assertEquals(Map.of("project_id", "p1"), stored.scopes());
        assertArrayEquals(r.payload(), stored.payload());
        StoredRow moved = row("a1", "p2", 2);   // a server-side scope change (SPEC §2.2)
        push(p, "c2", moved);
        assertEquals(2, Reads.row(storage(), p, "tasks", "a1").orElseThrow().serverVersion());
        assertTrue(Reads.scan(storage(), p, new RowScanQuery("tasks", projects("p1"), null, 10)).isEmpty(),
                "the row-scope index entry for the old scope is gone");
        assertEquals(1, Reads.scan(storage(), p, new RowScanQuery("tasks", projects("p2"), null, 10)).size());
        assertEquals(Optional.empty(), Reads.row(storage(), partition("elsewhere"), "tasks", "a1"));
    }

    @Test @Seed("SPEC §4.7 keyset pages by row id in byte order")
    void snapshotPagesAreKeysetPagesInByteOrder() {
        String p = partition("pages");
        List<String> ids = List.of("b", "B", "a", "A", "é", "z", "Z", "aa", "a-1", "中");
        int n = 0;
        for (String id : ids) push(p, "c" + n++, row(id, "p1", 1));
        push(p, "other", row("x-other", "p2", 1));
        List<String> expected = ids.stream().sorted(ServerStorageContractTest::compareUtf8).toList();
        List<String> seen = new ArrayList<>();
        String after = null;
        while (true) {
            List<StoredRow> page = Reads.scan(storage(), p, new RowScanQuery("tasks", projects("p1"), after, 3));
            if (page.isEmpty()) break;
            assertTrue(page.size() <= 3);
            page.forEach(r -> seen.add(r.rowId()));
            after = page.get(page.size() - 1).rowId();
        }
        assertEquals(expected, seen);
        assertThrows(StorageException.class, () -> Reads.scan(storage(), p,
                new RowScanQuery("tasks", new ScopeFilter(Map.of()), null, 10)));
        ScopeFilter twoVars = new ScopeFilter(Map.of("project_id", List.of("p1"), "zzz", List.of("x")));
        assertTrue(Reads.scan(storage(), p, new RowScanQuery("tasks", twoVars, null, 10)).isEmpty());
    }

    private static int compareUtf8(String a, String b) {
        return java.util.Arrays.compareUnsigned(a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------- push results

    @Test @Seed("SPEC §2.3 idempotency: first writer wins")
    void pushResultsRoundTripAndTheFirstWriterWins() {
        String p = partition("results");
        StoredPushResult applied = new StoredPushResult(StoredPushResult.Status.APPLIED, 7L, 123L, "id-1", List.of(
                new OperationResult.Applied(0),
                new OperationResult.Conflict(1, "sync.version_conflict", "stale", 4, new byte[] {0, 1, (byte) 0xff},
                        new byte[] {2, 0}),
                new OperationResult.Failed(2, "app.rule", "no", true, "{\"reason\":\"x\",\"fieldPaths\":[\"a\"]}")));
        storage().inTransaction(p, tx -> {
            tx.putPushResult("c1", "k1", applied);
            tx.putPushResult("c1", "k1", StoredPushResult.rejected(List.of()));   // loses
            assertTrue(tx.getPushResult("c1", "k1").isPresent(), "visible on the transaction's connection");
            return null;
        });
        StoredPushResult back = Reads.pushResult(storage(), p, "c1", "k1").orElseThrow();
        assertEquals(StoredPushResult.Status.APPLIED, back.status());
        assertEquals(7L, back.commitSeq());
        assertEquals(123L, back.recordedAtMs());
        assertEquals("id-1", back.cacheIdentity());
        assertEquals(applied.results().get(0), back.results().get(0));
        OperationResult.Conflict conflict = (OperationResult.Conflict) back.results().get(1);
        assertArrayEquals(new byte[] {0, 1, (byte) 0xff}, conflict.serverRow());
        assertArrayEquals(new byte[] {2, 0}, conflict.conflictColumns(), "the bitmap comes back as stored");
        assertEquals(4, conflict.serverVersion());
        assertEquals(applied.results().get(2), back.results().get(2), "details JSON comes back byte-exact");
        assertEquals(Optional.empty(), Reads.pushResult(storage(), p, "c1", "other"));
    }

    @Test @Seed("ARCHITECTURE step 4: a rejection rolls back to the savepoint and commits")
    void aRejectedPushDiscardsItsWritesAndStoresTheRejection() {
        String p = partition("reject");
        push(p, "c1", row("a1", "p1", 1));
        StoredPushResult rejected = StoredPushResult.rejected(List.of(
                new OperationResult.Failed(1, "sync.forbidden", "denied", false, null)));
        String outcome = storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("tasks", row("a2", "p1", 1), 0);
            tx.upsertRow("tasks", row("a1", "p1", 2), 1);
            tx.rejectPush("client-1", "c2", rejected);
            return "returned normally";
        });
        assertEquals("returned normally", outcome);
        assertEquals(Optional.empty(), Reads.row(storage(), p, "tasks", "a2"));
        assertEquals(1, Reads.row(storage(), p, "tasks", "a1").orElseThrow().serverVersion());
        assertEquals(1, storage().getMaxCommitSeq(p));
        StoredPushResult back = Reads.pushResult(storage(), p, "client-1", "c2").orElseThrow();
        assertEquals(StoredPushResult.Status.REJECTED, back.status());
        assertEquals(rejected.results(), back.results());
    }

    @Test @Seed("ARCHITECTURE step 4 in few round trips: lock, gate and re-check together")
    void lockForPushReturnsTheGateAndTheStoredResultUnderTheLock() {
        String p = partition("preamble");
        storage().touchPartition(p, 1, "e-pre");
        StoredRow r = row("a1", "p1", 1);
        long seq = storage().inTransaction(p, tx -> {
            PushPreamble pre = tx.lockForPush(schema().version(), List.of(new PushKey("client-1", "k1")), List.of(), false);
            assertEquals("e-pre", pre.gate().logEpoch());
            assertEquals(schema().version(), pre.gate().storedSchemaVersion());
            assertEquals(java.util.Map.of(), pre.existing());
            tx.upsertRow("tasks", r, 0);
            return tx.appendCommit(TestSchemas.upsertCommit("k1", r),
                    StoredPushResult.applied(0, List.of(new OperationResult.Applied(0))));
        });
        assertEquals(1, seq);
        StoredPushResult stored = Reads.pushResult(storage(), p, "client-1", "k1").orElseThrow();
        assertEquals(1L, stored.commitSeq(), "the allocated seq replaced the placeholder");
        assertEquals(List.of(new OperationResult.Applied(0)), stored.results());
        PushPreamble replay = storage().inTransaction(p, tx -> tx.lockForPush(schema().version(),
                List.of(new PushKey("client-1", "k1")), List.of(), false));
        assertEquals(stored.commitSeq(), replay.existing().get(new PushKey("client-1", "k1")).commitSeq());
        assertThrows(IllegalArgumentException.class, () -> storage().inTransaction(p, tx -> tx.appendCommit(
                TestSchemas.upsertCommit("k2", r), StoredPushResult.rejected(List.of()))));
        assertEquals(1, storage().getMaxCommitSeq(p));
    }

    @Test @Seed("ARCHITECTURE: after the lock, the commit's writes in as few round trips as possible")
    void lockForPushPrefetchesRowsAndApplyCommitWritesEverythingAtOnce() {
        String p = partition("apply");
        push(p, "c1", row("a1", "p1", 1), row("a2", "p1", 1));
        StoredRow a1v2 = row("a1", "p2", 2);
        StoredRow a3 = row("a3", "p1", 1);
        long seq = storage().inTransaction(p, tx -> {
            PushPreamble pre = tx.lockForPush(schema().version(), List.of(new PushKey("client-1", "k2")),
                    List.of(new RowKey("tasks", "a1"), new RowKey("tasks", "a3"), new RowKey("tasks", "a2")), false);
            assertEquals(java.util.Set.of(new RowKey("tasks", "a1"), new RowKey("tasks", "a2")), pre.rows().keySet(),
                    "absent rows are absent from the map");
            assertEquals(1, pre.rows().get(new RowKey("tasks", "a1")).serverVersion());
            assertArrayEquals(row("a2", "p1", 1).payload(), pre.rows().get(new RowKey("tasks", "a2")).payload());
            List<RowWrite> writes = List.of(new RowWrite.Upsert("tasks", a1v2, 0), new RowWrite.Upsert("tasks", a3, 1),
                    new RowWrite.Delete("tasks", "a2", 2));
            NewCommit commit = new NewCommit("client-1", "k2", "actor-1", 50, List.of(
                    StoredChange.delete("tasks", "a1", Map.of("project_id", "p1")),
                    StoredChange.upsert("tasks", "a1", 2, a1v2.scopes(), a1v2.payload()),
                    StoredChange.upsert("tasks", "a3", 1, a3.scopes(), a3.payload()),
                    StoredChange.delete("tasks", "a2", Map.of("project_id", "p1"))));
            return tx.applyCommit(writes, commit, StoredPushResult.applied(0, List.of(new OperationResult.Applied(0),
                    new OperationResult.Applied(1), new OperationResult.Applied(2))));
        });
        assertEquals(2, seq);
        assertEquals(2, Reads.row(storage(), p, "tasks", "a1").orElseThrow().serverVersion());
        assertTrue(Reads.row(storage(), p, "tasks", "a3").isPresent());
        assertTrue(Reads.row(storage(), p, "tasks", "a2").isEmpty());
        assertEquals(List.of("a3"), Reads.scan(storage(), p, new RowScanQuery("tasks", projects("p1"), null, 10)).stream()
                .map(StoredRow::rowId).toList());
        assertEquals(4, window(p, new CommitWindowQuery("tasks", projects("p1", "p2"), 1, 2, 10))
                .get(0).changes().size());
        assertEquals(2L, Reads.pushResult(storage(), p, "client-1", "k2").orElseThrow().commitSeq());
        assertThrows(IllegalStateException.class, () -> storage().inTransaction(p, tx -> tx.applyCommit(List.of(),
                TestSchemas.upsertCommit("k3", a3), StoredPushResult.applied(0, List.of()))), "needs the push lock");
    }

    // ------------------------------------------------------ tombstones, column versions (WIRE3-DELTA §3, §4)

    /** Deletes the rows and appends one commit with their delete changes; returns the commitSeq. */
    private long pushDelete(String p, String commitId, String... rowIds) {
        return storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            List<StoredChange> changes = new ArrayList<>();
            for (String id : rowIds) {
                tx.deleteRow("tasks", id);
                changes.add(StoredChange.delete("tasks", id, Map.of("project_id", "p1")));
            }
            return tx.appendCommit(new NewCommit("client-1", commitId, "actor-1", 1_000L, changes));
        });
    }

    private boolean tombstoned(String p, String rowId) {
        return storage().inTransaction(p, tx -> tx.hasTombstone("tasks", rowId));
    }

    @Test @Seed("WIRE3-DELTA §4: every applied delete records a tombstone; an insert clears it; a prune removes it")
    void deletesLeaveTombstonesThatAnInsertClearsAndAPruneRemoves() {
        String p = partition("tomb");
        push(p, "c1", row("a1", "p1", 1), row("a2", "p1", 1));
        assertFalse(tombstoned(p, "a1"));
        pushDelete(p, "c2", "a1");
        assertTrue(tombstoned(p, "a1"));
        assertFalse(tombstoned(p, "a2"), "a row never deleted");
        PushPreamble pre = storage().inTransaction(p, tx -> tx.lockForPush(schema().version(), List.of(),
                List.of(new RowKey("tasks", "a1"), new RowKey("tasks", "a2"), new RowKey("tasks", "a9")), true));
        assertEquals(java.util.Set.of(new RowKey("tasks", "a1")), pre.tombstones());
        assertEquals(3, push(p, "c3", row("a1", "p1", 1)), "an insert over the deleted row");
        assertFalse(tombstoned(p, "a1"), "the insert cleared it");
        push(p, "c4", row("a2", "p1", 2));
        long deleted = pushDelete(p, "c5", "a1", "a2");
        assertTrue(tombstoned(p, "a1") && tombstoned(p, "a2"));
        String epoch = storage().touchPartition(p, 1, "e-tomb").logEpoch();
        storage().pruneCommitsThrough(p, new CommitPruneQuery(epoch, deleted - 1));
        assertTrue(tombstoned(p, "a1"), "a tombstone above the horizon stays");
        storage().pruneCommitsThrough(p, new CommitPruneQuery(epoch, deleted));
        assertFalse(tombstoned(p, "a1") || tombstoned(p, "a2"), "the prune removed them with the log");
    }

    @Test @Seed("WIRE3-DELTA §4: within one transaction, each row's last change decides its tombstone")
    void aGroupsLastChangeOfARowDecidesItsTombstone() {
        String p = partition("tomb-group");
        push(p, "c1", row("a1", "p1", 1), row("a2", "p1", 1));
        StoredRow a1again = row("a1", "p1", 1);
        storage().inTransaction(p, tx -> {
            tx.lockForPush(schema().version(), List.of(), List.of(), false);
            // a1: deleted, then inserted again by the next commit; a2: deleted by the second commit
            tx.applyCommit(List.of(new RowWrite.Delete("tasks", "a1", 0)), new NewCommit("client-1", "g1", "actor-1",
                    1, List.of(StoredChange.delete("tasks", "a1", Map.of("project_id", "p1")))),
                    StoredPushResult.applied(0, List.of(new OperationResult.Applied(0))));
            tx.nextCandidate();
            tx.applyCommit(List.of(new RowWrite.Upsert("tasks", a1again, 0), new RowWrite.Delete("tasks", "a2", 1)),
                    new NewCommit("client-1", "g2", "actor-1", 2, List.of(
                            StoredChange.upsert("tasks", "a1", 1, a1again.scopes(), a1again.payload()),
                            StoredChange.delete("tasks", "a2", Map.of("project_id", "p1")))),
                    StoredPushResult.applied(0, List.of(new OperationResult.Applied(0), new OperationResult.Applied(1))));
            return null;
        });
        assertFalse(tombstoned(p, "a1"));
        assertTrue(tombstoned(p, "a2"));
    }

    @Test @Seed("WIRE3-DELTA §3: per-column versions are stored with the row, eagerly and with the append")
    void columnVersionsAreStoredWithTheRow() {
        String p = partition("colv");
        push(p, "c1", row("a1", "p1", 1), row("a2", "p1", 1));
        ColumnVersions moved = ColumnVersions.NONE.written(4, 1, new boolean[] {false, false, true, false}, 2);
        StoredRow base = row("a1", "p1", 2);
        StoredRow eager = new StoredRow("a1", 2, base.scopes(), base.payload(), moved);
        StoredRow staged = new StoredRow("a2", 2, base.scopes(), row("a2", "p1", 2).payload(), moved);
        storage().inTransaction(p, tx -> {
            tx.lockForPush(schema().version(), List.of(), List.of(), false);
            tx.upsertRow("tasks", eager, 0);
            tx.applyCommit(List.of(new RowWrite.Upsert("tasks", staged, 1)), new NewCommit("client-1", "c2",
                    "actor-1", 2, List.of(StoredChange.upsert("tasks", "a1", 2, eager.scopes(), eager.payload()),
                    StoredChange.upsert("tasks", "a2", 2, staged.scopes(), staged.payload()))),
                    StoredPushResult.applied(0, List.of(new OperationResult.Applied(0), new OperationResult.Applied(1))));
            return null;
        });
        for (String id : List.of("a1", "a2")) {
            StoredRow read = storage().inTransaction(p, tx -> tx.getRow("tasks", id)).orElseThrow();
            assertEquals(moved, read.columnVersions(), id);
            assertEquals(2, read.columnVersions().of(2, 2));
            assertEquals(1, read.columnVersions().of(0, 2), "a column the write did not move");
            PushPreamble pre = storage().inTransaction(p, tx -> tx.lockForPush(schema().version(), List.of(),
                    List.of(new RowKey("tasks", id)), false));
            assertEquals(moved, pre.rows().get(new RowKey("tasks", id)).columnVersions());
        }
        push(p, "c3", row("a1", "p1", 3));
        assertEquals(ColumnVersions.NONE, storage().inTransaction(p, tx -> tx.getRow("tasks", "a1")).orElseThrow()
                .columnVersions(), "a full-row write leaves none");
    }

    // ---------------------------------------------------------------- declared references (SPEC §6.11)

    private StoredRow card(String id, String project, String board) {
        return TestSchemas.cardRow(schema(), id, project, board, null, null, null);
    }

    /** Upserts {@code cards} rows in a transaction of their own. */
    private void putCards(String p, StoredRow... cards) {
        storage().inTransaction(p, tx -> {
            for (int i = 0; i < cards.length; i++) tx.upsertRow("cards", cards[i], i);
            return null;
        });
    }

    private static List<String> ids(List<StoredRow> rows) { return rows.stream().map(StoredRow::rowId).toList(); }

    private static List<String> children(StorageTransaction tx, String column, String parent) {
        return ids(tx.scanRowsByReference("cards", column, parent, null, 100));
    }

    @Test @Seed("SPEC §6.11: a parent's children, paged by keyset in byte order of row id")
    void childrenOfAParentArePagedByKeysetInByteOrderOfRowId() {
        String p = partition("children");
        List<String> expected = List.of("0", "B2", "Z5", "_4", "a1", "c3", "e6");   // byte order, not linguistic
        List<StoredRow> rows = new ArrayList<>();
        for (String id : List.of("c3", "a1", "_4", "e6", "B2", "0", "Z5")) rows.add(card(id, "p1", "b1"));
        rows.add(card("b2-only", "p1", "b2"));
        rows.add(card("b10", "p1", "b10"));   // another parent whose id starts with this one's
        rows.add(card("orphan", "p1", null));
        putCards(p, rows.toArray(new StoredRow[0]));
        List<List<String>> pages = storage().inTransaction(p, tx -> {
            List<List<String>> out = new ArrayList<>();
            String after = null;
            while (true) {
                List<StoredRow> page = tx.scanRowsByReference("cards", "board_id", "b1", after, 3);
                out.add(ids(page));
                if (page.size() < 3) return out;
                after = page.get(page.size() - 1).rowId();
            }
        });
        assertEquals(List.of(expected.subList(0, 3), expected.subList(3, 6), expected.subList(6, 7)), pages);
        StoredRow first = storage().inTransaction(p, tx -> tx.scanRowsByReference("cards", "board_id", "b1", null, 1))
                .get(0);
        StoredRow stored = card("0", "p1", "b1");
        assertEquals(1, first.serverVersion());
        assertEquals(stored.scopes(), first.scopes());
        assertArrayEquals(stored.payload(), first.payload());
        assertEquals(List.of(), storage().inTransaction(p, tx -> ids(tx.scanRowsByReference("cards", "board_id", "b1",
                "e6", 3))), "after the last child");
        assertEquals(List.of("a1", "c3", "e6"), storage().inTransaction(p, tx -> ids(tx.scanRowsByReference("cards",
                "board_id", "b1", "_4", 10))), "strictly after a cursor");
        assertEquals(List.of("Z5", "_4"), storage().inTransaction(p, tx -> ids(tx.scanRowsByReference("cards",
                "board_id", "b1", "Y", 2))), "after a cursor that names no row");
    }

    @Test @Seed("SPEC §2.1: a scan never leaves its partition")
    void childrenInOtherPartitionsAreNeverReturned() {
        String a = partition("children-a");
        String b = partition("children-b");
        putCards(a, card("c1", "pa", "b1"));
        putCards(b, card("c1", "pb", "b1"), card("c2", "pb", "b1"));
        List<StoredRow> inA = storage().inTransaction(a, tx -> tx.scanRowsByReference("cards", "board_id", "b1", null,
                10));
        assertEquals(List.of("c1"), ids(inA));
        assertEquals(Map.of("project_id", "pa"), inA.get(0).scopes());
        assertEquals(List.of("c1", "c2"), storage().inTransaction(b, tx -> children(tx, "board_id", "b1")));
        assertEquals(List.of(), storage().inTransaction(partition("children-none"), tx -> children(tx, "board_id",
                "b1")));
    }

    @Test @Seed("SPEC §6.11: enforcement reads candidate state, so it sees the commit's own writes")
    void theScanSeesTheTransactionsOwnUncommittedWrites() {
        String p = partition("children-own");
        putCards(p, card("c1", "p1", "b1"), card("c2", "p1", "b1"), card("c3", "p1", "b1"));
        assertThrows(IllegalStateException.class, () -> storage().inTransaction(p, tx -> {
            tx.lockPartitionForPush();
            tx.upsertRow("cards", card("c4", "p1", "b1"), 0);
            tx.deleteRow("cards", "c2");
            tx.upsertRow("cards", card("c3", "p1", "b2"), 1);   // moved to another parent
            assertEquals(List.of("c1", "c4"), children(tx, "board_id", "b1"));
            assertEquals(List.of("c3"), children(tx, "board_id", "b2"));
            throw new IllegalStateException("roll back");
        }));
        assertEquals(List.of("c1", "c2", "c3"), storage().inTransaction(p, tx -> children(tx, "board_id", "b1")),
                "the writes were the transaction's own");

        // a push group's writes, which the storage's own unit may keep back until its next round trip
        storage().inTransaction(p, tx -> {
            tx.lockForPush(schema().version(), List.of(), List.of(), false);
            StoredRow c5 = card("c5", "p1", "b1");
            tx.applyCommit(List.of(new RowWrite.Upsert("cards", c5, 0), new RowWrite.Delete("cards", "c1", 1)),
                    new NewCommit("client-1", "k1", "actor-1", 1, List.of(
                            StoredChange.upsert("cards", "c5", 1, c5.scopes(), c5.payload()),
                            StoredChange.delete("cards", "c1", c5.scopes()))),
                    StoredPushResult.applied(0, List.of(new OperationResult.Applied(0),
                            new OperationResult.Applied(1))));
            tx.nextCandidate();
            assertEquals(List.of("c2", "c3", "c5"), children(tx, "board_id", "b1"));
            return null;
        });
        assertEquals(List.of("c2", "c3", "c5"), storage().inTransaction(p, tx -> children(tx, "board_id", "b1")));
    }

    @Test @Seed("SPEC §6.11 + §2.4: the parent's row id is matched as the column's type renders it")
    void parentIdsAreMatchedAsTheReferenceColumnsTypeRendersThem() {
        String p = partition("children-typed");
        CompiledSchema s = schema();
        putCards(p, TestSchemas.cardRow(s, "i7", "p1", null, 7L, null, null),
                TestSchemas.cardRow(s, "i70", "p1", null, 70L, null, null),
                TestSchemas.cardRow(s, "i-7", "p1", null, -7L, null, null),
                TestSchemas.cardRow(s, "t", "p1", null, null, null, true),
                TestSchemas.cardRow(s, "f", "p1", null, null, null, false),
                TestSchemas.cardRow(s, "j1", "p1", null, null, "{\"a\":1}", null),
                TestSchemas.cardRow(s, "j2", "p1", null, null, "{ \"a\": 1 }", null),
                TestSchemas.cardRow(s, "j3", "p1", null, null, "{\"a\":2}", null));
        storage().inTransaction(p, tx -> {
            assertEquals(List.of("i7"), children(tx, "slot", "7"));
            assertEquals(List.of("i-7"), children(tx, "slot", "-7"));
            // no integer renders as these: they match nothing, and the transaction stays usable
            for (String notRendered : List.of("07", "+7", "7.0", "x", "", "9223372036854775808")) {
                assertEquals(List.of(), children(tx, "slot", notRendered), notRendered);
            }
            assertEquals(List.of("t"), children(tx, "flag", "true"));
            assertEquals(List.of("f"), children(tx, "flag", "false"));
            assertEquals(List.of(), children(tx, "flag", "TRUE"));
            // JSON by its text: an equal value spelled otherwise is another row id
            assertEquals(List.of("j1"), children(tx, "tag", "{\"a\":1}"));
            assertEquals(List.of("j2"), children(tx, "tag", "{ \"a\": 1 }"));
            assertEquals(List.of(), children(tx, "tag", "{\"a\": 1}"));
            assertEquals(List.of(), children(tx, "tag", "{\"a\":"), "not JSON");
            assertEquals(List.of("i7"), children(tx, "slot", "7"), "still usable");
            return null;
        });
    }

    @Test @Seed("SPEC §6.11: a string id is matched exactly, also where the stored projection cannot be")
    void stringIdsAreMatchedExactlyAcrossPages() {
        String p = partition("children-exact");
        // a projection cannot hold U+0000 and stores U+FFFD: both values look alike to an index
        String nul = "x\u0000y";
        String replacement = "x\uFFFDy";
        putCards(p, card("k1", "p1", nul), card("k2", "p1", replacement), card("k3", "p1", nul),
                card("k4", "p1", replacement), card("k5", "p1", replacement));
        storage().inTransaction(p, tx -> {
            assertEquals(List.of("k2", "k4"), ids(tx.scanRowsByReference("cards", "board_id", replacement, null, 2)));
            assertEquals(List.of("k5"), ids(tx.scanRowsByReference("cards", "board_id", replacement, "k4", 2)));
            assertEquals(List.of("k1", "k3"), children(tx, "board_id", nul));
            return null;
        });
    }

    @Test @Seed("SPEC §6.11: a parent without children, and no parent at all")
    void aParentWithoutChildrenHasAnEmptyPage() {
        String p = partition("children-empty");
        assertEquals(List.of(), storage().inTransaction(p, tx -> children(tx, "board_id", "b1")), "an empty table");
        putCards(p, card("c1", "p1", "b1"));
        assertEquals(List.of(), storage().inTransaction(p, tx -> children(tx, "board_id", "b9")));
        assertEquals(List.of(), storage().inTransaction(p, tx -> children(tx, "slot", "1")), "another column");
    }

    @Test @Seed("WIRE3-DELTA §5: a cascaded SET NULL moves one column's version, so the scan carries them")
    void childrenCarryTheirColumnVersions() {
        String p = partition("children-colv");
        StoredRow base = card("c1", "p1", "b1");
        ColumnVersions moved = ColumnVersions.NONE.written(6, 1, new boolean[] {false, false, true, false, false,
                false}, 2);
        putCards(p, new StoredRow("c1", 2, base.scopes(), base.payload(), moved), card("c2", "p1", "b1"));
        List<StoredRow> rows = storage().inTransaction(p, tx -> tx.scanRowsByReference("cards", "board_id", "b1",
                null, 10));
        assertEquals(moved, rows.get(0).columnVersions());
        assertEquals(2, rows.get(0).serverVersion());
        assertEquals(ColumnVersions.NONE, rows.get(1).columnVersions());
    }

    @Test
    void aScanByAColumnWithoutAReferenceIsRefused() {
        String p = partition("children-refused");
        storage().inTransaction(p, tx -> {
            assertThrows(IllegalArgumentException.class, () -> tx.scanRowsByReference("cards", "project_id", "p1",
                    null, 10), "no index to scan");
            assertThrows(IllegalArgumentException.class, () -> tx.scanRowsByReference("cards", "board_id", "b1",
                    null, 0));
            StorageException unknown = assertThrows(StorageException.class, () -> tx.scanRowsByReference("nope",
                    "board_id", "b1", null, 10));
            assertEquals(StorageErrorCode.SCHEMA_CHANGED, unknown.code());
            return null;
        });
    }

    // ---------------------------------------------------------------- clients

    @Test @Seed("SPEC §4.5 client records, WIRE3-DELTA §8.6 wire version")
    void clientRecordsUpsertAndListCursors() {
        String p = partition("clients");
        ClientRecord r = new ClientRecord("c1", "actor", 2, 5, 100,
                List.of(new ClientSubscription("s1", "tasks", Map.of("project_id", List.of("p1", "p2")))));
        storage().putClientRecord(p, r);
        assertEquals(Optional.of(r), storage().getClientRecord(p, "c1"));
        ClientRecord advanced = new ClientRecord("c1", "actor", 1, 9, 200, List.of());
        storage().putClientRecord(p, advanced);
        storage().putClientRecord(p, new ClientRecord("c2", "other", 2, 3, 150, List.of()));
        assertEquals(Optional.of(advanced), storage().getClientRecord(p, "c1"));
        assertEquals(List.of(new ClientCursorInfo("c1", 9, 200), new ClientCursorInfo("c2", 3, 150)),
                storage().listClientCursors(p));
        assertEquals(Optional.empty(), storage().getClientRecord(p, "nobody"));
    }

    /**
     * Issue 15: a request whose client record only moved its activity time, by less than the touch interval (1 s by
     * default), leaves the stored row as it is; any other change, or an older activity time, is written at once.
     */
    @Test @Seed("SPEC §4.5 client records")
    void aRecordThatOnlyMovedItsActivityTimeWithinTheTouchIntervalIsNotRewritten() {
        String p = partition("touch-client");
        List<ClientSubscription> subs = List.of(new ClientSubscription("s1", "tasks",
                Map.of("project_id", List.of("p1"))));
        storage().putClientRecord(p, new ClientRecord("c1", "actor", 2, 5, 1_000, subs));
        java.util.function.Function<ClientRecord, ClientRecord> request = record -> {
            try (StorageSession s = storage().openSession(p)) {
                s.preamble(record.updatedAtMs(), "e-touch", schema().version(), record.clientId(), true);
                s.recordClientsThenReadGate(s.recordToStore(Optional.of(record)).stream().toList(),
                        schema().version());
            }
            return storage().getClientRecord(p, record.clientId()).orElseThrow();
        };
        assertEquals(1_000, request.apply(new ClientRecord("c1", "actor", 2, 5, 1_500, subs)).updatedAtMs(),
                "the same record half a second later: not rewritten");
        assertEquals(new ClientRecord("c1", "actor", 2, 6, 1_600, subs),
                request.apply(new ClientRecord("c1", "actor", 2, 6, 1_600, subs)), "a new cursor is written");
        assertEquals(new ClientRecord("c1", "actor", 2, 6, 1_700, List.of()),
                request.apply(new ClientRecord("c1", "actor", 2, 6, 1_700, List.of())), "new subscriptions too");
        assertEquals(1_700, request.apply(new ClientRecord("c1", "actor", 2, 6, 2_650, List.of())).updatedAtMs());
        assertEquals(2_700, request.apply(new ClientRecord("c1", "actor", 2, 6, 2_700, List.of())).updatedAtMs(),
                "a whole interval after the stored activity time it is written again");
        assertEquals(new ClientRecord("c2", "actor", 1, -1, 2_700, List.of()),
                request.apply(new ClientRecord("c2", "actor", 1, -1, 2_700, List.of())), "a new client is written");
    }

    /**
     * §1.5: a record write never rebinds a client to another actor. Two actors' first requests with one new
     * clientId both find no record; the second write used to take the client over (its cursor, its subscriptions,
     * its binding); it now changes nothing, and the first actor keeps its client.
     */
    @Test @Seed("SPEC §1.5 clientId binding")
    void aRecordWriteNeverRebindsAClientToAnotherActor() {
        String p = partition("rebind");
        ClientRecord first = new ClientRecord("shared", "actor-a", 2, 7, 1_000, List.of(new ClientSubscription("s1",
                "tasks", Map.of("project_id", List.of("p1")))));
        storage().putClientRecord(p, first);
        storage().putClientRecord(p, new ClientRecord("shared", "actor-b", 1, 99, 2_000, List.of()));
        assertEquals(Optional.of(first), storage().getClientRecord(p, "shared"));
        try (StorageSession s = storage().openSession(p)) {
            s.preamble(3_000, "e-rebind", schema().version(), "shared", true);
            s.recordClientsThenReadGate(List.of(new ClientRecord("shared", "actor-b", 1, 99, 3_000, List.of())),
                    schema().version());
        }
        assertEquals(Optional.of(first), storage().getClientRecord(p, "shared"), "nor at a request's end");
        ClientRecord moved = new ClientRecord("shared", "actor-a", 2, 8, 4_000, List.of());
        storage().putClientRecord(p, moved);
        assertEquals(Optional.of(moved), storage().getClientRecord(p, "shared"), "its own actor's write lands");
    }

    /**
     * Issue 15: several requests' ends in one round trip: each client record stored as it would be alone (JSON that
     * needs escaping included), one bound to another actor not at all, then the serve gate.
     */
    @Test @Seed("SPEC §1.5, §4.5 client records")
    void severalRequestsClientRecordsAreStoredTogether() {
        String p = partition("records-together");
        ClientRecord bound = new ClientRecord("bound", "actor-a", 2, 7, 1_000, List.of());
        storage().putClientRecord(p, bound);
        List<ClientRecord> ends = List.of(
                new ClientRecord("c1", "actor-a", 2, 5, 2_000, List.of(new ClientSubscription("s\"1\\", "tasks",
                        Map.of("project_id", List.of("p{1}", "p,2"))))),
                new ClientRecord("c \"2\"", "actor-b", 1, -1, 2_000, List.of()),
                new ClientRecord("bound", "actor-b", 1, 99, 2_000, List.of()));
        try (StorageSession s = storage().openSession(p)) {
            s.preamble(2_000, "e-together", schema().version(), "c1", true);
            assertEquals(storage().readServeGate(p, schema().version()),
                    s.recordClientsThenReadGate(ends, schema().version()));
        }
        assertEquals(Optional.of(ends.get(0)), storage().getClientRecord(p, "c1"));
        assertEquals(Optional.of(ends.get(1)), storage().getClientRecord(p, "c \"2\""));
        assertEquals(Optional.of(bound), storage().getClientRecord(p, "bound"), "never rebound (§1.5)");
    }

    /**
     * A pull's preamble reads the client record and the log head (one statement since issue 15): each absent (no
     * record, no commit: head and horizon 0), then each present, the horizon after a prune included.
     */
    @Test @Seed("SPEC §3.6, §4.5: a pull's preamble")
    void preamblesReadClientRecordsAndTheLogHeadPresentOrNot() {
        String p = partition("preamble-reads");
        java.util.function.Supplier<RequestPreamble> preamble = () -> {
            try (StorageSession s = storage().openSession(p)) {
                return s.preamble(1_000, "e-pre", schema().version(), "c1", true);
            }
        };
        RequestPreamble empty = preamble.get();
        assertEquals(Optional.empty(), empty.clientRecord());
        assertEquals(List.of(0L, 0L), List.of(empty.maxCommitSeq(), empty.horizonSeq()));

        for (int i = 1; i <= 4; i++) push(p, "c" + i, row("a" + i, "p1", 1));
        storage().pruneCommitsThrough(p, new CommitPruneQuery(empty.registry().logEpoch(), 2));
        ClientRecord record = new ClientRecord("c1", "actor", 2, 4, 1_000, List.of(new ClientSubscription("s1",
                "tasks", Map.of("project_id", List.of("p1")))));
        storage().putClientRecord(p, record);
        storage().putClientRecord(p, new ClientRecord("c2", "other", 2, 1, 900, List.of()));
        RequestPreamble full = preamble.get();
        assertEquals(Optional.of(record), full.clientRecord());
        assertEquals(List.of(4L, 2L), List.of(full.maxCommitSeq(), full.horizonSeq()));

        // several clients at once (attaches read together): a preamble per id, in order, duplicates and absent alike
        List<RequestPreamble> group;
        try (StorageSession s = storage().openSession(p)) {
            assertEquals(List.of(), s.preambles(1_000, "e-pre", schema().version(), List.of()));
            group = s.preambles(1_000, "e-pre", schema().version(), List.of("c2", "nobody", "c1", "c2"));
        }
        assertEquals(List.of(Optional.of("other"), Optional.empty(), Optional.of("actor"), Optional.of("other")),
                group.stream().map(g -> g.clientRecord().map(ClientRecord::actorId)).toList());
        assertEquals(Optional.of(record), group.get(2).clientRecord());
        for (RequestPreamble g : group) {
            assertEquals(List.of(4L, 2L, (long) schema().version()),
                    List.of(g.maxCommitSeq(), g.horizonSeq(), (long) g.gateSchemaVersion()));
            assertEquals(full.registry().logEpoch(), g.registry().logEpoch());
        }
    }

    // ---------------------------------------------------------- horizon, prune

    @Test @Seed("SPEC §4.6 horizon")
    void horizonIsMonotonic() {
        String p = partition("horizon");
        assertEquals(0, storage().getHorizonSeq(p));
        String epoch = storage().touchPartition(p, 1, "e-horizon").logEpoch();
        storage().pruneCommitsThrough(p, new CommitPruneQuery(epoch, 5));
        storage().pruneCommitsThrough(p, new CommitPruneQuery(epoch, 3));
        assertEquals(5, storage().getHorizonSeq(p), "a prune never lowers the horizon");
    }

    @Test @Seed("UPSTREAM-SERVER §2.2 epoch-checked pruneCommitsThrough")
    void pruneIsEpochCheckedAndRemovesTheLogThroughTheHorizon() {
        String p = partition("prune");
        for (int i = 1; i <= 5; i++) push(p, "c" + i, row("a" + i, "p1", 1));
        assertEquals(StorageErrorCode.PARTITION_UNREGISTERED, assertThrows(StorageException.class,
                () -> storage().pruneCommitsThrough(p, new CommitPruneQuery("e1", 2))).code());
        storage().touchPartition(p, 1, "e1");
        assertEquals(StorageErrorCode.PRUNE_EPOCH_MISMATCH, assertThrows(StorageException.class,
                () -> storage().pruneCommitsThrough(p, new CommitPruneQuery("e0", 2))).code());
        assertEquals(StorageErrorCode.INVALID_PRUNE_CURSOR, assertThrows(StorageException.class,
                () -> storage().pruneCommitsThrough(p, new CommitPruneQuery("e1", -1))).code());
        assertEquals(StorageErrorCode.INVALID_PRUNE_CURSOR, assertThrows(StorageException.class,
                () -> storage().pruneCommitsThrough(p, new CommitPruneQuery("", 1))).code());
        assertEquals(new CommitPruneResult(0, 3, 3), storage().pruneCommitsThrough(p, new CommitPruneQuery("e1", 3)));
        assertEquals(new CommitPruneResult(3, 3, 0), storage().pruneCommitsThrough(p, new CommitPruneQuery("e1", 1)),
                "never lowers the horizon");
        assertEquals(3, storage().getHorizonSeq(p));
        List<StoredCommit> rest = window(p, new CommitWindowQuery("tasks", projects("p1"), 0, 5,
                100));
        assertEquals(List.of(4L, 5L), rest.stream().map(StoredCommit::commitSeq).toList());
        // §4.6 (issue 13): the window carries the horizon read after it, so a reader from cursor 0 learns that
        // commits 1..3 are gone instead of taking 4 and 5 for all there is
        CommitWindow fromZero = Reads.window(storage(), p, new CommitWindowQuery("tasks", projects("p1"), 0, 5, 100));
        assertEquals(3, fromZero.horizonSeq());
        assertTrue(fromZero.prunedUnder(0) && !fromZero.prunedUnder(3));
        assertEquals(5, storage().getMaxCommitSeq(p), "pruning never rewinds the counter");
        assertEquals(6, push(p, "c6", row("a6", "p1", 1)));
    }

    // --------------------------------------------------- transactions, gate

    @Test @Seed("JTA: a unit runs on the caller's connection, sends all it wrote and never finishes the transaction")
    void aUnitRunsOnTheCallersConnectionInsideTheCallersTransaction() {
        for (boolean staged : new boolean[] {true, false}) {
            String p = partition("unit-" + staged);
            StoredRow r = row("a1", "p1", 1);
            long seq = runner().inNewTransaction(c -> {
                long s = storage().runUnit(c, p, staged, tx -> {
                    assertEquals(p, tx.partition());
                    tx.lockPartitionForPush();
                    tx.upsertRow("tasks", r, 0);
                    return tx.appendCommit(TestSchemas.upsertCommit("c1", r));
                });
                assertFalse(c.getAutoCommit(), "the storage left the caller's transaction open");
                assertEquals(0, storage().getMaxCommitSeq(p), "not visible before the caller commits");
                return s;
            });
            // what the unit staged and its head went out before it returned: the caller's commit kept them
            assertEquals(1, seq);
            assertEquals(1, storage().getMaxCommitSeq(p));
            assertTrue(storage().inTransaction(p, tx -> tx.getRow("tasks", "a1")).isPresent());
        }
    }

    @Test @Seed("seeds/003 readServeGate")
    void serveGateCarriesMarkerEpochAndPendingCheckpointsOfAllPartitions() {
        String p = partition("gate");
        String other = partition("gate-other");
        int version = schema().version();
        storage().touchPartition(p, 1, "e-gate");
        ServeGate before = storage().readServeGate(p, version);
        assertEquals(version, before.storedSchemaVersion());
        assertEquals("e-gate", before.logEpoch());
        declare(other, "projection-x", version, 1);
        ServeGate after = storage().readServeGate(p, version);
        assertTrue(after.pending().contains(new PendingCheckpoint(other, "projection-x")),
                "pending spans every partition");
        assertEquals(Optional.of(new ServeGateRefusal.Checkpoint(other, "projection-x")).map(Object::getClass),
                after.refusal(version, List.of()).map(Object::getClass));
        ServeGate onTx = storage().inTransaction(p, tx -> tx.readServeGate(version));
        assertEquals(after, onTx);
        assertEquals(null, storage().readServeGate(partition("unregistered"), version).logEpoch());
        assertEquals(Optional.empty(), after.changedSince(before));
        storage().rotatePartitionLogEpoch(p, "e-restored", 2);
        assertEquals(Optional.of(new ServeGateRefusal.Epoch()),
                storage().readServeGate(p, version).changedSince(before));
    }

    // ------------------------------------------------------------- RFC 0007

    @Test @Seed("UPSTREAM-SERVER §3.4 checkpoint lifecycle, through the interface")
    void checkpointLifecycleFromDeclarationToActivation() {
        String p = partition("lifecycle");
        int v = schema().version();
        StoredCheckpoint declared = declare(p, "proj", v, 10);
        assertEquals(CheckpointState.DECLARED, declared.state());
        assertEquals(List.of(declared), Checkpoints.read(storage(), p));
        StoredCheckpoint claimed = Checkpoints.claim(storage(), p, "proj", v, 11);
        assertEquals(CheckpointState.BACKFILLING, claimed.state());
        assertEquals(1, claimed.ownerEpoch());
        push(p, "c1", row("a1", "p1", 1));
        long watermark = Checkpoints.coverage(storage(), p, List.of("tasks"));
        assertEquals(1, watermark);
        assertTrue(Checkpoints.advance(storage(), p, "proj", 1, watermark, 1, 12));
        assertEquals(SourceCoverage.CLEAN, Checkpoints.changesAbove(storage(), p, List.of("tasks"), watermark));
        assertEquals(ActivationOutcome.ACTIVATED,
                storage().activateCheckpoint(p, "proj", 1, watermark, List.of("tasks"), 13));
        StoredCheckpoint activated = Checkpoints.read(storage(), p).get(0);
        assertEquals(CheckpointState.ACTIVATED, activated.state());
        assertEquals(watermark, activated.watermark());
        assertEquals(1, activated.observedRows());
        assertEquals(13, activated.updatedAtMs());
    }

    @Test @Seed("seeds/003: stale, unverifiable, superseded, fence missing")
    void checkpointRefusalsAreValuesOrCodes() {
        String p = partition("refusals");
        int v = schema().version();
        storage().touchPartition(p, 1, "e");
        assertEquals(StorageErrorCode.CHECKPOINT_NOT_DECLARED, assertThrows(StorageException.class,
                () -> Checkpoints.claim(storage(), p, "proj", v, 0)).code());
        assertEquals(StorageErrorCode.CHECKPOINT_FENCE_MISSING, assertThrows(StorageException.class,
                () -> storage().activateCheckpoint(p, "proj", 1, 0, List.of("tasks"), 0)).code());
        declare(p, "proj", v, 0);
        long first = Checkpoints.claim(storage(), p, "proj", v, 0).ownerEpoch();
        long second = Checkpoints.claim(storage(), p, "proj", v, 0).ownerEpoch();
        assertTrue(second > first);
        assertFalse(Checkpoints.advance(storage(), p, "proj", first, 5, 5, 0), "a superseded owner writes nothing");
        push(p, "c1", row("a1", "p1", 1));
        push(p, "c2", row("a2", "p1", 1));
        assertEquals(SourceCoverage.CHANGED, Checkpoints.changesAbove(storage(), p, List.of("tasks"), 1));
        assertEquals(ActivationOutcome.STALE, storage().activateCheckpoint(p, "proj", second, 1, List.of("tasks"), 0));
        storage().pruneCommitsThrough(p, new CommitPruneQuery("e", 2));
        assertEquals(SourceCoverage.UNVERIFIABLE, Checkpoints.changesAbove(storage(), p, List.of("tasks"), 1));
        assertEquals(ActivationOutcome.UNVERIFIABLE,
                storage().activateCheckpoint(p, "proj", second, 1, List.of("tasks"), 0));
        assertEquals(CheckpointState.BACKFILLING, Checkpoints.read(storage(), p).get(0).state());
    }

    @Test
    void ensureSchemaIsMemoizedAndSetsTheWriterVersion() {
        assertEquals(schema().version(), storage().writerVersion());
        storage().ensureSchema(schema(), List.of());   // memoized: no barrier re-check, no error
        assertEquals(schema().version(), storage().writerVersion());
    }

    @Test
    void unknownTablesAreRefusedWithACode() {
        StorageException e = assertThrows(StorageException.class,
                () -> Reads.row(storage(), partition("x"), "no_such_table", "r"));
        assertEquals(StorageErrorCode.SCHEMA_CHANGED, e.code());
        assertFalse(e.getMessage().contains("no_such_table"), "messages carry no identifiers");
        assertEquals("no_such_table", e.details().get("table"));
    }

    @Test @Seed("SPEC §6.3: a group's idempotency re-check finds exactly its own (clientId, clientCommitId) pairs")
    void aGroupsResultReadFindsOnlyItsOwnPairs() {
        String p = partition("result-pairs");
        StoredPushResult stored = StoredPushResult.rejected(List.of(new OperationResult.Failed(0,
                "sync.constraint_violation", "constraint", false, null)));
        for (PushKey key : List.of(new PushKey("client-a", "k1"), new PushKey("client-b", "k2"))) {
            storage().inTransaction(p, tx -> {
                tx.lockForPush(1, List.of(key), List.of(), false);
                tx.rejectPush(key.clientId(), key.clientCommitId(), stored);
                return null;
            });
        }
        // every client and every commit id of the group has a stored result, but under another pair
        Map<PushKey, StoredPushResult> existing = storage().inTransaction(p, tx -> tx.lockForPush(1,
                List.of(new PushKey("client-a", "k2"), new PushKey("client-b", "k1"), new PushKey("client-a", "k1"),
                        new PushKey("client-a", "k1")), List.of(), false).existing());
        assertEquals(java.util.Set.of(new PushKey("client-a", "k1")), existing.keySet());
        assertEquals(stored.results(), existing.get(new PushKey("client-a", "k1")).results());
    }
}

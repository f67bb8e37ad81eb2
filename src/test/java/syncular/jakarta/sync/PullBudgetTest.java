package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * The response byte budget shared by all sections of a pull (issue #5): a section stops on a page or commit
 * boundary, the token or cursor carries the rest, and resuming delivers every row once. Includes the case where an
 * earlier section spent the whole budget before a fresh bootstrap's first page: that section must answer a token
 * from the start, never an empty "done" bootstrap.
 */
class PullBudgetTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private static String partition;
    private static PullProcessor pull;

    @BeforeAll
    static void seed() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        partition = EmbeddedPostgresSupport.partition("budget");
        PushProcessor push = new PushProcessor(storage, () -> 1_000L, Validation.NONE, 1000);
        for (String project : List.of("pa", "pb")) {
            for (int i = 0; i < 30; i++) {
                String id = project + "-" + String.format("%03d", i);
                Pushes.one(push, new PushProcessor.RequestScope(new Identity("w", partition), "writer", 2), SCHEMA,
                        Map.of("project_id", List.of("*")), new PushCommit("c-" + id, List.of(new PushCommit.Operation(
                                "tasks", id, Op.UPSERT, null,
                                TestSchemas.taskPayload(SCHEMA, id, project, "x".repeat(100), false)))));
            }
        }
        pull = new PullProcessor(null, 0, new RecentCommits(0));
    }

    @AfterAll
    static void close() { db.close(); }

    private static PullProcessor.Plan plan(String id, String project, long cursor, String token) {
        return new PullProcessor.Plan(new Subscription(id, "tasks", Map.of("project_id", List.of(project)), null,
                cursor, token), SCHEMA.table("tasks").orElseThrow(), java.util.Optional.of(
                Map.of("project_id", List.of(project))));
    }

    private static List<String> rows(List<ResponseFrame> frames) {
        List<String> ids = new ArrayList<>();
        for (ResponseFrame f : frames) {
            if (f instanceof SegmentInline s) {
                for (List<RowsSegment.Row> block : RowsSegmentDecoder.decode(s.payload()).blocks()) {
                    for (RowsSegment.Row r : block) ids.add((String) r.values()[0]);
                }
            }
        }
        return ids;
    }

    @Test
    void twoBootstrapsUnderASmallBudgetResumeFromTheirTokensWithEveryRowOnce() {
        PullLimits limits = new PullLimits(1000, 4, 50, PullHeader.ACCEPT_INLINE_ROWS);
        long maxSeq = storage.getMaxCommitSeq(partition);
        Map<String, List<String>> delivered = new TreeMap<>(Map.of("pa", new ArrayList<>(), "pb", new ArrayList<>()));
        Map<String, Long> cursors = new TreeMap<>(Map.of("pa", -1L, "pb", -1L));
        Map<String, String> tokens = new TreeMap<>();
        boolean sawEmptyResumableSection = false;
        int responses = 0;
        while (responses++ < 100) {
            PullProcessor.Budget budget = new PullProcessor.Budget(2_000);
            boolean pending = false;
            for (String project : List.of("pa", "pb")) {
                if (cursors.get(project) >= 0 && tokens.get(project) == null) continue;
                PullProcessor.Section section = pull.section(storage.openSession(partition), "epoch", SCHEMA, limits,
                        plan("s-" + project, project, cursors.get(project), tokens.get(project)), maxSeq, 0, 1 << 20,
                        budget, Optional.empty());
                List<String> ids = rows(section.frames());
                SubStart start = (SubStart) section.frames().get(0);
                assertEquals(!ids.isEmpty(), start.bootstrap(), "SUB_START.bootstrap iff the section carries segments");
                SubEnd end = (SubEnd) section.frames().get(section.frames().size() - 1);
                if (ids.isEmpty()) {
                    assertNotNull(end.bootstrapStateJson(), "a bootstrap the budget did not reach must resume");
                    sawEmptyResumableSection = true;
                }
                delivered.get(project).addAll(ids);
                cursors.put(project, end.nextCursor());
                tokens.put(project, end.bootstrapStateJson());
                pending |= end.bootstrapStateJson() != null;
            }
            if (!pending) break;
        }
        assertTrue(sawEmptyResumableSection, "the budget must have starved the second section at least once");
        assertTrue(responses > 3, "the budget must have split the bootstrap over several responses");
        for (String project : List.of("pa", "pb")) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 30; i++) expected.add(project + "-" + String.format("%03d", i));
            assertEquals(expected, delivered.get(project), "every row once, in row-id order");
            assertEquals(maxSeq, cursors.get(project));
        }
    }

    /**
     * A page is capped in bytes as well as rows (issue 13 item 9b): with a page size of 1,000 rows a single page of
     * this table (~4.5 KB) would be the response's first page and go out whole, past the budget. It must stop at the
     * budget, the token carrying the rest, and resuming must deliver every row exactly once.
     */
    @Test
    void aPageStopsAtTheByteBudgetEvenWhenItIsTheResponsesFirstPage() {
        PullLimits limits = new PullLimits(1000, 1000, 50, PullHeader.ACCEPT_INLINE_ROWS);
        long maxSeq = storage.getMaxCommitSeq(partition);
        int budgetBytes = 1_000;
        List<String> delivered = new ArrayList<>();
        long cursor = -1;
        String token = null;
        int responses = 0;
        do {
            PullProcessor.Budget budget = new PullProcessor.Budget(budgetBytes);
            PullProcessor.Section section = pull.section(storage.openSession(partition), "epoch", SCHEMA, limits,
                    plan("s", "pa", cursor, token), maxSeq, 0, 1 << 20, budget, Optional.empty());
            long inlineBytes = 0;
            for (ResponseFrame f : section.frames()) {
                if (f instanceof SegmentInline s) inlineBytes += s.payload().length;
            }
            assertTrue(inlineBytes <= budgetBytes, "a response carried " + inlineBytes + " segment bytes");
            List<String> ids = rows(section.frames());
            assertFalse(ids.isEmpty(), "every response makes progress");
            delivered.addAll(ids);
            SubEnd end = (SubEnd) section.frames().get(section.frames().size() - 1);
            cursor = end.nextCursor();
            token = end.bootstrapStateJson();
        } while (token != null && responses++ < 100);
        assertTrue(responses > 2, "the byte cap must have split the page over several responses");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 30; i++) expected.add("pa-" + String.format("%03d", i));
        assertEquals(expected, delivered, "every row once, in row-id order");
        assertEquals(maxSeq, cursor);
    }

    /** An externally delivered segment is capped too: a published page never exceeds the response budget. */
    @Test
    void aPublishedSegmentStopsAtTheByteBudget() {
        List<byte[]> published = new ArrayList<>();
        PullProcessor external = new PullProcessor((request, bytes) -> {
            published.add(bytes);
            return new SegmentInline(bytes);
        }, 0, new RecentCommits(0));
        PullLimits limits = new PullLimits(1000, 1000, 50, PullHeader.ACCEPT_EXTERNAL_ROWS);
        long maxSeq = storage.getMaxCommitSeq(partition);
        PullProcessor.Section section = external.section(storage.openSession(partition), "epoch", SCHEMA, limits,
                plan("s", "pb", -1, null), maxSeq, 0, 256, new PullProcessor.Budget(1_500),
                Optional.empty());
        assertTrue(published.size() > 1, "the 30 rows did not fit one 1,500-byte segment");
        for (byte[] b : published) assertTrue(b.length <= 1_500, "a segment of " + b.length + " bytes");
        assertEquals(30, rows(section.frames()).size(), "every row in this one response (pages are cheap refs)");
        assertEquals(null, ((SubEnd) section.frames().get(section.frames().size() - 1)).bootstrapStateJson());
    }

    @Test
    void anIncrementalWindowUnderASmallBudgetEndsOnACommitBoundaryAndTheNextPullContinues() {
        PullLimits limits = new PullLimits(1000, 1000, 4, PullHeader.ACCEPT_INLINE_ROWS);
        long maxSeq = storage.getMaxCommitSeq(partition);
        long cursor = 0;
        List<Long> seqs = new ArrayList<>();
        int responses = 0;
        while (cursor < maxSeq && responses++ < 100) {
            PullProcessor.Section section = pull.section(storage.openSession(partition), "epoch", SCHEMA, limits,
                    plan("s", "pa", cursor, null), maxSeq, 0, 1 << 20,
                    new PullProcessor.Budget(1_000), Optional.empty());
            List<ResponseFrame> frames = section.frames();
            assertFalse(frames.get(1) instanceof SubEnd, "the first commit always goes");
            long last = cursor;
            for (ResponseFrame f : frames) {
                if (f instanceof CommitFrame c) {
                    seqs.add(c.commitSeq());
                    last = c.commitSeq();
                }
            }
            long next = ((SubEnd) frames.get(frames.size() - 1)).nextCursor();
            assertTrue(next == last || next == maxSeq, "the cursor stops at the last delivered commit");
            cursor = next;
        }
        assertTrue(responses > 3);
        List<Long> expected = new ArrayList<>();
        for (long s = 1; s <= 30; s++) expected.add(s);
        assertEquals(expected, seqs, "every commit of project pa once, in order");
    }
}

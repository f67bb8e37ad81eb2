package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * Server limits over HTTP (issue #5): a response that hits {@code syncular.limits.max-response-bytes} ends on a
 * page or commit boundary and the next pull continues (bootstrap and incremental, and a second subscription the
 * budget never reached); {@code sync.too_many_operations} counted over all commits of a request; gzip both ways, with
 * {@code max-request-bytes} counted after decoding.
 */
@ExtendWith(ArquillianExtension.class)
class SyncLimitsIT extends DatabaseIsolation {
    static final String PARTITION = "it-limits";
    static final int BUDGET = 6000;

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("limits"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*",
                "syncular.limits.max-response-bytes", String.valueOf(BUDGET),
                "syncular.limits.max-operations-per-request", "5",
                "syncular.limits.max-request-bytes", "16384",
                // most responses here exceed it: the spooled, file-backed, streamed path is the one under test
                "syncular.limits.response-spill-bytes", "1024"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private static String title(String id) { return id + ":" + "t".repeat(300); }

    /** Writes {@code n} rows of ~320 bytes into {@code list}, five per request (the operation cap). */
    private static void seed(SyncTestClient writer, String list, String prefix, int n) throws Exception {
        for (int from = 0; from < n; from += 5) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = from; i < Math.min(n, from + 5); i++) {
                String id = String.format("%s%03d", prefix, i);
                ops.add(PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id, list, title(id), false, 1)));
            }
            ResponseMessage r = writer.send(new RequestMessage(1, List.of(new ReqHeader(writer.clientId, 1),
                    new PushCommit(prefix + "-seed-" + from, ops))));
            assertEquals(PushResult.Status.APPLIED, ((PushResult) r.frames().get(1)).status());
        }
    }

    private static List<String> segmentRowIds(List<ResponseFrame> frames) {
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

    private HttpResponse<byte[]> post(SyncTestClient c, List<RequestFrame> frames) throws Exception {
        return c.post(RequestEncoder.encode(new RequestMessage(1, frames)), false);
    }

    @Test
    void aBootstrapOverTheBudgetEndsOnPageBoundariesAndContinuesWithEveryRowOnce() throws Exception {
        String a = "budget-a-" + UUID.randomUUID();
        String b = "budget-b-" + UUID.randomUUID();
        SyncTestClient writer = new SyncTestClient(base.toURI(), "writer-" + a, a);
        seed(writer, a, "a", 40);
        seed(writer, b, "b", 20);
        SyncTestClient reader = new SyncTestClient(base.toURI(), "reader-" + a, a);
        Map<String, Long> cursor = new java.util.TreeMap<>(Map.of(a, -1L, b, -1L));
        Map<String, String> token = new java.util.TreeMap<>();
        Map<String, List<String>> seen = Map.of(a, new ArrayList<>(), b, new ArrayList<>());
        boolean starved = false;
        int responses = 0;
        do {
            List<RequestFrame> frames = new ArrayList<>();
            frames.add(new ReqHeader(reader.clientId, 1));
            frames.add(new PullHeader(0, 4, 50, PullHeader.ACCEPT_INLINE_ROWS));
            frames.add(new Subscription("sa", "todos", Map.of("list_id", List.of(a)), null, cursor.get(a), token.get(a)));
            frames.add(new Subscription("sb", "todos", Map.of("list_id", List.of(b)), null, cursor.get(b), token.get(b)));
            HttpResponse<byte[]> http = post(reader, frames);
            assertEquals(200, http.statusCode(), () -> new String(http.body()));
            assertEquals(String.valueOf(http.body().length), http.headers().firstValue("Content-Length").orElse(""),
                    "a spooled body streams with its exact length");
            // a page goes whole or not at all; only the page that crossed the budget may end beyond it
            assertTrue(http.body().length < BUDGET + 2000, "response of " + http.body().length + " bytes");
            List<ResponseFrame> all = ResponseDecoder.decode(http.body()).frames();
            int at = 1;
            for (String list : List.of(a, b)) {
                List<ResponseFrame> section = new ArrayList<>();
                while (!(all.get(at) instanceof SubEnd)) section.add(all.get(at++));
                SubEnd end = (SubEnd) all.get(at++);
                List<String> ids = segmentRowIds(section);
                if (cursor.get(list) < 0 || token.get(list) != null) {
                    assertEquals(!ids.isEmpty(), ((SubStart) section.get(0)).bootstrap());
                    if (ids.isEmpty()) {
                        starved = true;
                        assertTrue(end.bootstrapStateJson() != null, "a section the budget never reached resumes");
                    }
                }
                seen.get(list).addAll(ids);
                cursor.put(list, end.nextCursor());
                token.put(list, end.bootstrapStateJson());
            }
            responses++;
        } while ((token.get(a) != null || token.get(b) != null) && responses < 50);
        assertNull(token.get(a));
        assertNull(token.get(b));
        assertTrue(responses >= 4, "the budget split the bootstrap (" + responses + " responses)");
        assertTrue(starved, "the first section spent the budget before the second's first page at least once");
        for (String list : List.of(a, b)) {
            Set<String> unique = new HashSet<>(seen.get(list));
            assertEquals(unique.size(), seen.get(list).size(), "no row twice");
        }
        assertEquals(40, seen.get(a).size());
        assertEquals(20, seen.get(b).size());
    }

    @Test
    void anIncrementalPullOverTheBudgetEndsOnACommitBoundaryAndTheNextPullContinues() throws Exception {
        String list = "incr-" + UUID.randomUUID();
        SyncTestClient c = new SyncTestClient(base.toURI(), "client-" + list, list);
        c.round(List.of());                                   // bootstrap of the empty list: cursor at the head
        long start = c.cursor;
        SyncTestClient writer = new SyncTestClient(base.toURI(), "writer-" + list, list);
        for (int i = 0; i < 30; i++) {
            String id = String.format("i%03d", i);
            writer.send(new RequestMessage(1, List.of(new ReqHeader(writer.clientId, 1), new PushCommit("inc-" + i,
                    List.of(PushCommit.Operation.upsert("todos", id, null,
                            SyncTestClient.todo(id, list, title(id), false, 1)))))));
        }
        List<Long> delivered = new ArrayList<>();
        int responses = 0;
        long previous = start;
        while (responses++ < 40) {
            ResponseMessage m = c.round(List.of());
            List<Long> seqs = m.frames().stream().filter(f -> f instanceof CommitFrame)
                    .map(f -> ((CommitFrame) f).commitSeq()).toList();
            if (seqs.isEmpty()) break;
            assertTrue(seqs.get(0) > previous);
            delivered.addAll(seqs);
            previous = seqs.get(seqs.size() - 1);
            long next = ((SubEnd) m.frames().get(m.frames().size() - 1)).nextCursor();
            assertTrue(next >= previous, "the cursor is at least the last delivered commit");
        }
        assertEquals(30, delivered.size(), "every commit once: " + delivered);
        assertEquals(new HashSet<>(delivered).size(), delivered.size());
        assertTrue(responses >= 3, "the budget split the window (" + responses + " responses)");
        assertEquals(30, c.snapshot().size());
        assertEquals(SyncFlowIT.serverRows(PARTITION, list), c.snapshot());
    }

    @Test
    void tooManyOperationsCountOverAllCommitsOfARequest() throws Exception {
        String list = "ops-" + UUID.randomUUID();
        SyncTestClient c = new SyncTestClient(base.toURI(), "client-" + list, list);
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(c.clientId, 1));
        for (int k = 0; k < 2; k++) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String id = "o" + k + i;
                ops.add(PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id, list, "x", false, 1)));
            }
            frames.add(new PushCommit("ops-" + k, ops));
        }
        HttpResponse<byte[]> r = post(c, frames);
        String body = new String(r.body());
        assertEquals(400, r.statusCode(), body);
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(body.contains("\"code\":\"sync.too_many_operations\""), body);
        assertEquals(List.of(), SyncFlowIT.serverRows(PARTITION, list), "nothing of the request was applied");
    }

    @Test
    void gzipRoundTripAndTheRequestCapCountsDecodedBytes() throws Exception {
        String list = "gzip-" + UUID.randomUUID();
        SyncTestClient c = new SyncTestClient(base.toURI(), "client-" + list, list);
        // push and pull the row back, so the response is above the 1 KiB below which bodies go out uncompressed
        byte[] plain = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(c.clientId, 1),
                new PushCommit("gz", List.of(PushCommit.Operation.upsert("todos", "g1", null,
                        SyncTestClient.todo("g1", list, "z".repeat(8000), false, 1)))),
                new syncular.jakarta.wire.PullHeader(0, 0, 0, 1), c.subscription())));
        HttpResponse<byte[]> ok = c.post(plain, true);
        assertEquals(200, ok.statusCode());
        assertEquals("gzip", ok.headers().firstValue("Content-Encoding").orElse(""), "a gzip response when accepted");
        assertEquals(PushResult.Status.APPLIED, ((PushResult) ResponseDecoder.decode(ok.body()).frames().get(1)).status());
        assertTrue(gzip(plain).length < 1000, "the wire body is far below the cap");

        byte[] big = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader(c.clientId, 1),
                new PushCommit("gz-big", List.of(PushCommit.Operation.upsert("todos", "g2", null,
                        SyncTestClient.todo("g2", list, "z".repeat(20_000), false, 1)))))));
        HttpResponse<byte[]> refused = c.post(big, true);
        String body = new String(refused.body());
        assertEquals(413, refused.statusCode(), body);   // HTTP's own status for a body over the cap
        assertTrue(body.contains("\"code\":\"sync.invalid_request\""), body);
        assertTrue(body.contains("max-request-bytes"), body);
        assertEquals(1, SyncFlowIT.serverRows(PARTITION, list).size());
    }

    private static byte[] gzip(byte[] plain) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        }
        return out.toByteArray();
    }
}

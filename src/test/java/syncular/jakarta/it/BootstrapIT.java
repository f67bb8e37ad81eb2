package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * A paged bootstrap (SPEC §4.7) interrupted mid-way — a response lost in transit, and writes landing between pages
 * (updates of delivered rows, deletes of undelivered ones, inserts before and after the row cursor) — resumes from
 * its token with no loss and no duplicate, then the incremental pull from the pin converges on the server's rows.
 * A token that is not one of this table silently restarts the bootstrap.
 */
@ExtendWith(ArquillianExtension.class)
class BootstrapIT extends DatabaseIsolation {
    static final String PARTITION = "it-bootstrap";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("bootstrap"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    /** One pull of the subscription with 10-row pages, one page per response. */
    private ResponseMessage page(SyncTestClient c) throws Exception {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(c.clientId, 1));
        frames.add(new PullHeader(0, 10, 1, PullHeader.ACCEPT_INLINE_ROWS));
        frames.add(c.subscription());
        return c.send(new RequestMessage(1, frames));
    }

    private static List<String> segmentRowIds(ResponseMessage m) {
        List<String> ids = new ArrayList<>();
        for (ResponseFrame f : m.frames()) {
            if (f instanceof SegmentInline s) {
                for (List<RowsSegment.Row> block : RowsSegmentDecoder.decode(s.payload()).blocks()) {
                    for (RowsSegment.Row r : block) ids.add((String) r.values()[0]);
                }
            }
        }
        return ids;
    }

    private static SubEnd subEnd(ResponseMessage m) {
        return (SubEnd) m.frames().stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow();
    }

    @Test
    void anInterruptedPagedBootstrapResumesWithNoLossOrDuplicate() throws Exception {
        String list = "boot-" + UUID.randomUUID();
        SyncTestClient writer = new SyncTestClient(base.toURI(), "writer-" + list, list);
        for (int batch = 0; batch < 5; batch++) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                String id = String.format("r%03d", batch * 10 + i + 10);
                ops.add(PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id, list, "v1", false, 1)));
            }
            writer.send(new RequestMessage(1, List.of(new ReqHeader(writer.clientId, 1),
                    new PushCommit("seed-" + batch, ops))));
        }
        SyncTestClient reader = new SyncTestClient(base.toURI(), "reader-" + list, list);
        Set<String> bootstrapped = new HashSet<>();
        List<String> order = new ArrayList<>();

        ResponseMessage first = page(reader);
        assertTrue(((SubStart) first.frames().get(1)).bootstrap());
        assertEquals(10, segmentRowIds(first).size());
        assertNotNull(subEnd(first).bootstrapStateJson(), "a page limit leaves a token");
        reader.apply(first);
        segmentRowIds(first).forEach(id -> assertTrue(bootstrapped.add(id), "duplicate " + id));
        order.addAll(segmentRowIds(first));

        // the second page's response is lost: the client never applies it
        List<String> lost = segmentRowIds(page(reader));
        assertEquals(10, lost.size());

        // writes between pages: update a delivered row, delete an undelivered one, insert before and after the cursor
        assertEquals(PushResult.Status.APPLIED, ((PushResult) writer.send(new RequestMessage(1, List.of(
                new ReqHeader(writer.clientId, 1), new PushCommit("between", List.of(
                        PushCommit.Operation.upsert("todos", "r010", null, SyncTestClient.todo("r010", list, "v2", false, 1)),
                        PushCommit.Operation.delete("todos", "r035", null),
                        PushCommit.Operation.upsert("todos", "r001", null, SyncTestClient.todo("r001", list, "early", false, 1)),
                        PushCommit.Operation.upsert("todos", "r099", null, SyncTestClient.todo("r099", list, "late", false, 1)))))))
                .frames().get(1)).status());

        // the retry with the same token gets the lost page again, then paging goes on to the end
        int responses = 0;
        while (reader.bootstrapState != null && responses++ < 20) {
            ResponseMessage m = page(reader);
            List<String> ids = segmentRowIds(m);
            if (responses == 1) assertEquals(lost, ids, "the retried token answers the lost page");
            ids.forEach(id -> assertTrue(bootstrapped.add(id), "duplicate " + id));
            order.addAll(ids);
            reader.apply(m);
        }
        assertNull(reader.bootstrapState);
        List<String> sorted = new ArrayList<>(order);
        sorted.sort(null);
        assertEquals(sorted, order, "pages follow row-id byte order");
        assertTrue(!bootstrapped.contains("r035"), "a row deleted before its page was reached is never sent");
        assertTrue(bootstrapped.contains("r099"), "a row inserted after the cursor is in a later page");

        // the incremental pull from the pin replays the in-between commit idempotently; then all equal the server
        reader.round(List.of());
        assertEquals(SyncFlowIT.serverRows(PARTITION, list), reader.snapshot());
        assertTrue(reader.snapshot().contains("r010@2:v2"));
        assertTrue(reader.snapshot().contains("r001@1:early"));
        assertTrue(reader.snapshot().stream().noneMatch(r -> r.startsWith("r035@")));
    }

    @Test
    void anUnreadableTokenSilentlyRestartsTheBootstrap() throws Exception {
        String list = "restart-" + UUID.randomUUID();
        SyncTestClient writer = new SyncTestClient(base.toURI(), "writer-" + list, list);
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            String id = String.format("q%03d", i);
            ops.add(PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id, list, "v", false, 1)));
        }
        writer.send(new RequestMessage(1, List.of(new ReqHeader(writer.clientId, 1), new PushCommit("seed", ops))));
        SyncTestClient reader = new SyncTestClient(base.toURI(), "reader-" + list, list);
        reader.apply(page(reader));
        // valid JSON (the wire demands it) that is no token of this table: another table's, and a malformed one; as
        // in the reference (pull.ts parseBootstrapToken) it is ignored and the cursor decides: -1 bootstraps anew
        reader.cursor = -1;
        reader.bootstrapState = "{\"asOfCommitSeq\":1,\"tables\":[\"other\"],\"tableIndex\":0,\"rowCursor\":\"q005\"}";
        ResponseMessage restarted = page(reader);
        List<String> firstPage = List.of("q000", "q001", "q002", "q003", "q004", "q005", "q006", "q007", "q008",
                "q009");
        assertEquals(firstPage, segmentRowIds(restarted));
        reader.bootstrapState = "{\"asOfCommitSeq\":\"soon\"}";
        assertEquals(firstPage, segmentRowIds(page(reader)));
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.ColumnBitmap;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SparseRowCodec;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;
import syncular.jakarta.wire.WireVersion;

/**
 * Wire version 3 beside 1 and 2 on a deployed server, raw SSP2 over HTTP: the server-observable half of the later
 * catalog's sparse-rows (B.21), delete-precedence (B.20) and references (B.19) scenarios, the same pull answered
 * byte for byte under wire 2 and wire 3, and a wire-2 client and wire-3 clients editing the same rows at once
 * until every replica converges on the server's rows.
 */
@ExtendWith(ArquillianExtension.class)
class Wire3IT extends DatabaseIsolation {
    private static final CompiledSchema SCHEMA = SchemaCompiler.load("it/wire3-schema.json",
            Wire3IT.class.getClassLoader());
    private static final TableSchema TASKS = SCHEMA.table("tasks").orElseThrow();
    private static final TableSchema PROJECTS = SCHEMA.table("projects").orElseThrow();
    private static final TableSchema ITEMS = SCHEMA.table("items").orElseThrow();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("wire3"), Map.of(
                        "syncular.schema", "it/wire3-schema.json",
                        "syncular.auth.mode", "fixed",
                        "syncular.auth.fixed.partition", "it-wire3",
                        "syncular.auth.fixed.allowed-scopes", "*"))
                .addAsResource("it/wire3-schema.json");
    }

    @ArquillianResource
    URL base;

    /** Each test's scope value; the tests share the deployment's one partition, so row ids carry it too. */
    private String project;

    @BeforeEach
    void ready() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        project = "p" + System.nanoTime();
    }

    private String id(String local) { return project + "-" + local; }

    /** A raw client of one wire version: its epoch, and a replica of the tasks of one project. */
    private final class Client {
        final String id;
        final int wire;
        String epoch;
        long cursor;
        int commits;
        final Map<String, Object[]> replica = new TreeMap<>();
        final Map<String, Long> versions = new TreeMap<>();

        Client(String name, int wire) {
            this.id = id(name);
            this.wire = wire;
        }

        ResponseMessage send(List<RequestFrame> frames) throws Exception {
            List<RequestFrame> all = new ArrayList<>();
            all.add(new ReqHeader(id, 1, epoch));
            all.addAll(frames);
            HttpResponse<byte[]> r = new SyncTestClient(base.toURI(), id, "unused")
                    .post(RequestEncoder.encode(new RequestMessage(wire, all)), false);
            assertEquals(200, r.statusCode(), () -> new String(r.body()));
            ResponseMessage m = ResponseDecoder.decode(r.body());
            assertEquals(wire, m.wireVersion());
            epoch = ((RespHeader) m.frames().get(0)).logEpoch();
            return m;
        }

        /** The partition's log epoch, from a pull of nothing: an acquisition carries no pushes (§2.1). */
        void acquireEpoch() throws Exception {
            send(List.of(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS)));
        }

        /** One commit; its PUSH_RESULT and the details frame, if any. */
        List<ResponseFrame> push(PushCommit.Operation... ops) throws Exception {
            if (epoch == null) acquireEpoch();
            ResponseMessage m = send(List.of(new PushCommit(id + "-" + (++commits), List.of(ops))));
            return m.frames().subList(1, m.frames().size());
        }

        PushResult result(PushCommit.Operation... ops) throws Exception {
            return (PushResult) push(ops).get(0);
        }

        /** An incremental pull of the project's tasks into the replica; the response's bytes. */
        byte[] pull() throws Exception {
            if (epoch == null) acquireEpoch();
            List<RequestFrame> all = List.of(new ReqHeader(id, 1, epoch),
                    new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS),
                    new Subscription("tasks", "tasks", Map.of("project_id", List.of(project)), null, cursor, null));
            HttpResponse<byte[]> r = new SyncTestClient(base.toURI(), id, "unused")
                    .post(RequestEncoder.encode(new RequestMessage(wire, all)), false);
            assertEquals(200, r.statusCode(), () -> new String(r.body()));
            for (ResponseFrame f : ResponseDecoder.decode(r.body()).frames()) {
                if (f instanceof CommitFrame c) {
                    for (CommitFrame.Change ch : c.changes()) {
                        if (ch.op() == Op.UPSERT) {
                            replica.put(ch.rowId(), RowCodec.decode(TASKS.descriptors(), ch.row()));
                            versions.put(ch.rowId(), ch.rowVersion());
                        } else {
                            replica.remove(ch.rowId());
                            versions.remove(ch.rowId());
                        }
                    }
                } else if (f instanceof SubEnd e) {
                    cursor = e.nextCursor();
                }
            }
            return r.body();
        }
    }

    private static byte[] sparse(TableSchema table, Object... nameValues) {
        boolean[] present = new boolean[table.columns().size()];
        Object[] values = new Object[present.length];
        for (int k = 0; k < nameValues.length; k += 2) {
            int c = table.columnIndex((String) nameValues[k]);
            present[c] = true;
            values[c] = nameValues[k + 1];
        }
        return SparseRowCodec.encode(table.descriptors(), table.primaryKeyIndex(), present, values);
    }

    private PushCommit.Operation task(String id, Long base, String title, Boolean done) {
        return PushCommit.Operation.upsert("tasks", id, base, sparse(TASKS, "id", id, "project_id", project,
                "title", title, "done", done));
    }

    private static PushCommit.Operation patch(String id, Long base, Object... nameValues) {
        Object[] all = new Object[nameValues.length + 2];
        all[0] = "id";
        all[1] = id;
        System.arraycopy(nameValues, 0, all, 2, nameValues.length);
        return PushCommit.Operation.upsert("tasks", id, base, sparse(TASKS, all));
    }

    private PushCommit.Operation fullRowV2(String id, Long base, String title, Boolean done) {
        return PushCommit.Operation.upsert("tasks", id, base,
                RowCodec.encode(TASKS.descriptors(), new Object[] {id, project, title, done}));
    }

    private static String code(PushResult r) {
        assertEquals(PushResult.Status.REJECTED, r.status(), r::toString);
        return ((PushResult.OpError) r.results().get(0)).code();
    }

    private static void applied(PushResult r) { assertEquals(PushResult.Status.APPLIED, r.status(), r::toString); }

    @Test
    void sparsePatchesMergePerColumnAndAConflictNamesItsColumns() throws Exception {
        Client a = new Client("w3-a", WireVersion.V3);
        Client b = new Client("w3-b", WireVersion.V3);
        applied(a.result(task(id("t1"), null, "first", false)));
        applied(a.result(patch(id("t1"), 1L, "title", "from a")));
        applied(b.result(patch(id("t1"), 1L, "done", true)));   // disjoint column, same base: lands
        PushResult lost = b.result(patch(id("t1"), 1L, "title", "from b"));
        PushResult.Conflict c = assertInstanceOf(PushResult.Conflict.class, lost.results().get(0));
        assertEquals("sync.version_conflict", c.code());
        assertEquals(3, c.serverVersion());
        assertArrayEquals(ColumnBitmap.ofNames(TASKS.descriptors(), List.of("title")), c.conflictColumns());
        assertArrayEquals(new Object[] {id("t1"), project, "from a", true},
                RowCodec.decode(TASKS.descriptors(), c.serverRow()), "the full stored row");
        a.pull();
        assertArrayEquals(new Object[] {id("t1"), project, "from a", true}, a.replica.get(id("t1")),
                "COMMIT rows are full rows");
        assertEquals("sync.invalid_request", code(a.result(patch(id("t1"), 3L, "project_id", "elsewhere"))));
        assertEquals("sync.invalid_request", code(a.result(patch(id("t1"), 9L, "title", "ahead"))));
        assertEquals("sync.row_missing", code(a.result(patch(id("t2"), null, "project_id", project, "title", "x"))));
    }

    @Test
    void aDeleteBeatsAnUnversionedUpsertAndAnExplicitInsertRecreates() throws Exception {
        Client a = new Client("w3-del", WireVersion.V3);
        applied(a.result(task(id("t1"), null, "first", false)));
        applied(a.result(PushCommit.Operation.delete("tasks", id("t1"), null)));
        assertEquals("sync.row_deleted", code(a.result(task(id("t1"), null, "stale", true))));
        applied(a.result(task(id("t1"), 0L, "again", false)));
        a.pull();
        assertArrayEquals(new Object[] {id("t1"), project, "again", false}, a.replica.get(id("t1")));
        assertEquals(1L, a.versions.get(id("t1")));
    }

    @Test
    void declaredReferencesRejectCascadeAndRestrictOnTheWire() throws Exception {
        Client a = new Client("w3-refs", WireVersion.V3);
        PushCommit.Operation parent = PushCommit.Operation.upsert("projects", id("P"), null,
                sparse(PROJECTS, "id", id("P"), "project_id", project));
        List<ResponseFrame> missing = a.push(PushCommit.Operation.upsert("items", id("i0"), null,
                sparse(ITEMS, "id", id("i0"), "project_id", project, "owner", id("nope"), "pin", null)));
        assertEquals("sync.reference_violation", code((PushResult) missing.get(0)));
        PushResultDetails details = assertInstanceOf(PushResultDetails.class, missing.get(1));
        assertEquals("{\"fieldPaths\":[\"owner\"],\"reason\":\"missing_parent\","
                + "\"references\":{\"parent\":\"projects\",\"row\":\"" + id("nope") + "\"}}",
                details.entries().get(0).details().toJson());
        applied(a.result(parent, PushCommit.Operation.upsert("items", id("i1"), null,
                sparse(ITEMS, "id", id("i1"), "project_id", project, "owner", null, "pin", id("P"))),
                PushCommit.Operation.upsert("items", id("i2"), null,
                        sparse(ITEMS, "id", id("i2"), "project_id", project, "owner", id("P"), "pin", null))));
        assertEquals("sync.reference_violation", code(a.result(PushCommit.Operation.delete("projects", id("P"), null))),
                "RESTRICT through i1's pin");
        applied(a.result(PushCommit.Operation.upsert("items", id("i1"), null, sparse(ITEMS, "id", id("i1"), "pin", null))));
        applied(a.result(PushCommit.Operation.delete("projects", id("P"), null)));
        // the cascade deleted i2 and left it a tombstone; i1 no longer referenced P and stays
        assertEquals("sync.row_deleted", code(a.result(PushCommit.Operation.upsert("items", id("i2"), null,
                sparse(ITEMS, "id", id("i2"), "project_id", project, "owner", null, "pin", null)))));
        applied(a.result(PushCommit.Operation.upsert("items", id("i1"), null, sparse(ITEMS, "id", id("i1"), "pin", null))));
    }

    @Test
    void theSamePullIsByteIdenticalUnderWire2AndWire3ButTheVersion() throws Exception {
        Client writer = new Client("w3-writer", WireVersion.V3);
        applied(writer.result(task(id("t1"), null, "one", false), task(id("t2"), null, "two", true)));
        applied(writer.result(patch(id("t1"), 1L, "title", "uno")));
        applied(writer.result(PushCommit.Operation.delete("tasks", id("t2"), null)));
        Client v2 = new Client("reader", WireVersion.V2);
        Client v3 = new Client("reader", WireVersion.V3);
        byte[] two = v2.pull();
        v3.epoch = v2.epoch;
        byte[] three = v3.pull();
        assertEquals(2, two[4]);
        assertEquals(3, three[4]);
        three[4] = 2;
        assertArrayEquals(two, three, "same frames, same bytes");
    }

    @Test
    void aWire2ClientAndWire3ClientsEditingTheSameRowsAtOnceConverge() throws Exception {
        int rows = 4;
        int rounds = 4;
        Client seed = new Client("w3-seed", WireVersion.V3);
        for (int r = 0; r < rows; r++) applied(seed.result(task(id("r" + r), null, "t", false)));
        Client legacy = new Client("w2-title", WireVersion.V2);
        Client checker = new Client("w3-done", WireVersion.V3);
        Client ranker = new Client("w3-title-free", WireVersion.V3);
        legacy.pull();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Callable<Void>> work = List.of(() -> {
            // row-level: every full row starts from the latest version it saw; a conflict rebases on serverRow
            for (int k = 1; k <= rounds; k++) {
                for (int r = 0; r < rows; r++) {
                    String id = id("r" + r);
                    for (int attempt = 0; ; attempt++) {
                        Object[] mine = legacy.replica.get(id).clone();
                        mine[2] = "legacy " + k;
                        PushResult res = legacy.result(fullRowV2(id, legacy.versions.get(id), (String) mine[2],
                                (Boolean) mine[3]));
                        if (res.status() == PushResult.Status.APPLIED) break;
                        PushResult.Conflict c = (PushResult.Conflict) res.results().get(0);
                        legacy.replica.put(id, RowCodec.decode(TASKS.descriptors(), c.serverRow()));
                        legacy.versions.put(id, c.serverVersion());
                        assertTrue(attempt < 50, "the wire-2 client keeps losing " + id);
                    }
                    legacy.pull();
                }
            }
            return null;
        }, () -> {
            for (int k = 1; k <= rounds; k++) {
                for (int r = 0; r < rows; r++) applied(checker.result(patch(id("r" + r), null, "done", k % 2 == 0)));
            }
            return null;
        }, () -> {
            for (int k = 1; k <= rounds; k++) {
                for (int r = 0; r < rows; r++) applied(ranker.result(patch(id("r" + r), null, "title", "free " + k)));
            }
            return null;
        });
        List<Future<Void>> running = new ArrayList<>();
        for (Callable<Void> w : work) running.add(pool.submit(w));
        for (Future<Void> f : running) f.get(120, TimeUnit.SECONDS);
        pool.shutdown();
        Client fresh = new Client("w3-fresh", WireVersion.V3);
        fresh.pull();
        legacy.pull();
        checker.pull();
        for (Client c : List.of(legacy, checker)) {
            assertEquals(fresh.versions, c.versions, c.id);
            for (String id : fresh.replica.keySet()) {
                assertArrayEquals(fresh.replica.get(id), c.replica.get(id), c.id + " " + id);
            }
        }
        for (int r = 0; r < rows; r++) {
            Object[] row = fresh.replica.get(id("r" + r));
            // the wire-2 client's full rows start from the version they conflict against, so they never revert
            // the wire-3 patches of done, which every row ends with
            assertEquals(rounds % 2 == 0, row[3], Arrays.toString(row));
            assertTrue(row[2].equals("legacy " + rounds) || row[2].equals("free " + rounds), Arrays.toString(row));
        }
    }
}

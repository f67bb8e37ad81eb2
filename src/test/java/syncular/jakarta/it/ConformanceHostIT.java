package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.ColumnDescriptor;
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
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * The conformance host's control plane (issue: conformance host) and the sync behaviours it makes testable:
 * revocation, horizon resets and re-bootstrap, the virtual clock, reset semantics.
 */
@ExtendWith(ArquillianExtension.class)
class ConformanceHostIT extends DatabaseIsolation {
    static final String TASKS_SCHEMA = """
            {"version":1,"tables":[{"name":"tasks","primaryKey":"id","columns":[
              {"name":"id","type":"string","nullable":false},
              {"name":"project_id","type":"string","nullable":false},
              {"name":"title","type":"string","nullable":false},
              {"name":"done","type":"boolean","nullable":false},
              {"name":"priority","type":"integer","nullable":true},
              {"name":"meta","type":"json","nullable":true},
              {"name":"blob","type":"bytes","nullable":true}],
             "scopes":[{"pattern":"project:{project_id}"}]}]}""";
    static final List<ColumnDescriptor> TASKS = syncular.jakarta.schema.SchemaCompiler.compile(TASKS_SCHEMA)
            .table("tasks").orElseThrow().descriptors();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** What reset and GET capabilities answer: the catalog capabilities this host offers. */
    static final String CAPABILITIES = "{\"capabilities\":[\"validators\",\"commit-validators\",\"leases\","
            + "\"idempotency-fault\",\"backup-restore\",\"blobs\",\"blob-presign\",\"signed-urls\"]}";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("conformance"), Map.of("syncular.conformance-host", "true"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = control("POST", "reset",
                "{\"schema\":" + TASKS_SCHEMA + ",\"partition\":\"conf-p\",\"nowMs\":1782993600000}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(CAPABILITIES, r.body());
    }

    @Test
    void everyRouteAnswers200JsonInItsShape() throws Exception {
        assertJson(control("GET", "capabilities", null), CAPABILITIES);
        assertJson(control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\",\"*\"]}"), "{}");
        assertJson(control("POST", "resolver", "{\"failing\":false}"), "{}");
        assertJson(control("GET", "clock", null), "{\"nowMs\":1782993600000}");
        assertJson(control("POST", "clock/advance", "{\"ms\":1500}"), "{\"nowMs\":1782993601500}");
        assertJson(control("POST", "prune", "{}"), "{\"horizonSeq\":0}");
        assertJson(control("GET", "max-commit-seq", null), "{\"value\":0}");
        assertJson(control("GET", "horizon-seq", null), "{\"value\":0}");
        assertJson(control("GET", "tables/tasks/rows", null), "[]");
        HttpResponse<String> bad = control("POST", "clock/advance", "{\"ms\":\"soon\"}");
        assertEquals(400, bad.statusCode());
        assertTrue(bad.body().contains("\"code\":\"sync.invalid_request\""), bad.body());
    }

    @Test
    void rowsReadBackInTheDriverFormWithTheVirtualClocksTime() throws Exception {
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        control("POST", "clock/advance", "{\"ms\":42}");
        byte[] row = RowCodec.encode(TASKS, new Object[] {"t1", "p1", "Write \"spec\"", true, 7L, "{\"a\": [1, 2]}",
                new byte[] {0, (byte) 0xab}});
        ResponseMessage r = sync("alice", "c-alice", List.of(new PushCommit("cc1",
                List.of(PushCommit.Operation.upsert("tasks", "t1", null, row)))), "p1", 0);
        assertEquals(PushResult.Status.APPLIED, ((PushResult) r.frames().get(1)).status());
        assertJson(control("GET", "tables/tasks/rows", null), "[{\"rowId\":\"t1\",\"version\":1,\"values\":{"
                + "\"id\":\"t1\",\"project_id\":\"p1\",\"title\":\"Write \\\"spec\\\"\",\"done\":true,\"priority\":7,"
                + "\"meta\":\"{\\\"a\\\": [1, 2]}\",\"blob\":{\"$bytes\":\"00ab\"}},\"scopes\":{\"project_id\":\"p1\"}}]");
        ResponseMessage pulled = sync("alice", "c-alice", List.of(), "p1", 0);
        CommitFrame commit = (CommitFrame) pulled.frames().stream().filter(f -> f instanceof CommitFrame).findFirst()
                .orElseThrow();
        assertEquals(1782993600042L, commit.createdAtMs());
        assertJson(control("GET", "max-commit-seq", null), "{\"value\":1}");
    }

    @Test
    void aRevokedGrantYieldsRevokedAndNoData() throws Exception {
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        sync("alice", "c-a", List.of(push("t1", "p1")), "p1", -1);
        control("PUT", "actors/alice/allowed", "{}");
        ResponseMessage r = sync("alice", "c-a", List.of(), "p1", -1);
        SubStart start = assertInstanceOf(SubStart.class, r.frames().get(1));
        assertEquals(SubStart.Status.REVOKED, start.status());
        assertEquals("sync.scope_revoked", start.reasonCode());
        assertTrue(start.effectiveScopes().isEmpty());
        assertEquals(3, r.frames().size(), "RESP_HEADER SUB_START SUB_END only");
        assertEquals(-1, ((SubEnd) r.frames().get(2)).nextCursor());

        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        control("POST", "resolver", "{\"failing\":true}");
        SubStart failClosed = (SubStart) sync("alice", "c-a", List.of(), "p1", -1).frames().get(1);
        assertEquals(SubStart.Status.REVOKED, failClosed.status());
    }

    @Test
    void aCursorBehindTheHorizonIsResetAndReBootstrapConverges() throws Exception {
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        for (int i = 0; i < 5; i++) sync("alice", "writer", List.of(push("t" + i, "p1")), "p1", 5);
        control("POST", "clock/advance", "{\"ms\":" + (31L * 24 * 3600 * 1000) + "}");
        HttpResponse<String> pruned = control("POST", "prune", "{\"retention\":{\"minRetainedCommits\":1}}");
        assertEquals("{\"horizonSeq\":4}", pruned.body());
        ResponseMessage reset = sync("alice", "late", List.of(), "p1", 2);
        SubStart start = (SubStart) reset.frames().get(1);
        assertEquals(SubStart.Status.RESET, start.status());
        assertEquals("sync.cursor_expired", start.reasonCode());
        ResponseMessage rebootstrap = sync("alice", "late", List.of(), "p1", -1);
        assertTrue(((SubStart) rebootstrap.frames().get(1)).bootstrap());
        assertEquals(5, ((SubEnd) rebootstrap.frames().get(rebootstrap.frames().size() - 1)).nextCursor());
        ResponseMessage atHorizon = sync("alice", "late", List.of(), "p1", 4);
        assertEquals(SubStart.Status.ACTIVE, ((SubStart) atHorizon.frames().get(1)).status());
    }

    @Test
    void resetWipesEveryKindOfStateAndServesTheNewSchema() throws Exception {
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        sync("alice", "c1", List.of(push("t1", "p1")), "p1", -1);
        assertTrue(control("GET", "tables/tasks/rows", null).body().contains("\"t1\""));

        // the same version with a different table set, then a LOWER version: both serve the new schema
        String notes = "{\"version\":1,\"tables\":[{\"name\":\"notes\",\"primaryKey\":\"id\",\"columns\":["
                + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},{\"name\":\"org\",\"type\":\"string\",\"nullable\":false}],"
                + "\"scopes\":[{\"pattern\":\"org:{org}\"}]}]}";
        assertEquals(200, control("POST", "reset", "{\"schema\":" + notes + ",\"partition\":\"conf-p\",\"nowMs\":5}").statusCode());
        assertEquals(400, control("GET", "tables/tasks/rows", null).statusCode(), "tasks is gone with the old schema");
        assertJson(control("GET", "tables/notes/rows", null), "[]");
        assertJson(control("GET", "max-commit-seq", null), "{\"value\":0}");
        assertJson(control("GET", "clock", null), "{\"nowMs\":5}");

        assertEquals(200, control("POST", "reset", "{\"schema\":" + TASKS_SCHEMA.replace("\"version\":1", "\"version\":3")
                + ",\"partition\":\"conf-p\",\"nowMs\":1}").statusCode());
        assertEquals(200, control("POST", "reset", "{\"schema\":" + TASKS_SCHEMA + ",\"partition\":\"conf-p\",\"nowMs\":1}").statusCode());
        // the grant is gone: the same pull is revoked; after a new grant commitSeq starts again at 1
        assertEquals(SubStart.Status.REVOKED, ((SubStart) sync("alice", "c1", List.of(), "p1", -1).frames().get(1)).status());
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        ResponseMessage r = sync("alice", "c1", List.of(push("t9", "p1")), "p1", -1);
        assertEquals(1L, ((PushResult) r.frames().get(1)).commitSeq());
    }

    @Test
    void aSegmentDownloadIsReauthorizedOnEveryRequestAndExpiresOnTheVirtualClock() throws Exception {
        HttpResponse<String> reset = control("POST", "reset", "{\"schema\":" + TASKS_SCHEMA
                + ",\"partition\":\"conf-p\",\"nowMs\":1000,\"limits\":{\"segmentTtlMs\":60000}}");
        assertEquals(200, reset.statusCode(), reset.body());
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\",\"p2\"]}");
        sync("alice", "seg-writer", List.of(push("t1", "p1"), push("t2", "p1"), push("t3", "p2")), "p1", 0);
        ResponseMessage pulled = sync("alice", "seg-reader", List.of(), "p1", -1, PullHeader.ACCEPT_EXTERNAL_ROWS);
        SegmentRef ref = (SegmentRef) pulled.frames().stream().filter(f -> f instanceof SegmentRef).findFirst()
                .orElseThrow(() -> new AssertionError("external-only accept must get a SEGMENT_REF: " + pulled));
        assertEquals(2, ref.rowCount());
        assertTrue(ref.url() == null, "no signed URLs are configured");
        URI uri = base.toURI().resolve("segments/" + ref.segmentId());

        HttpResponse<byte[]> ok = segment(uri, "alice", "{\"project_id\":[\"p1\"]}", null);
        assertEquals(200, ok.statusCode());
        assertEquals(ref.segmentId(), "sha256:" + java.util.HexFormat.of().formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest(ok.body())));
        assertEquals(ref.byteLength(), ok.body().length);
        assertEquals("\"" + ref.segmentId() + "\"", ok.headers().firstValue("ETag").orElse(""));
        assertEquals("application/octet-stream", ok.headers().firstValue("Content-Type").orElse(""));
        assertEquals("private, max-age=0", ok.headers().firstValue("Cache-Control").orElse(""));
        assertEquals("Authorization, X-Syncular-Scopes, Accept-Encoding", ok.headers().firstValue("Vary").orElse(""));
        assertEquals(304, segment(uri, "alice", "{\"project_id\":[\"p1\"]}", "\"" + ref.segmentId() + "\"").statusCode());

        assertError(segment(uri, "alice", "{\"project_id\":[\"p2\"]}", null), 403, "sync.forbidden");
        assertError(segment(uri, "bob", "{\"project_id\":[\"p1\"]}", null), 403, "sync.forbidden");
        assertError(segment(uri, "alice", "not json", null), 400, "sync.invalid_request");
        assertError(segment(uri, null, "{\"project_id\":[\"p1\"]}", null), 401, "sync.auth_required");
        assertError(segment(base.toURI().resolve("segments/sha256:00"), "alice", "{\"project_id\":[\"p1\"]}", null),
                404, "sync.not_found");
        control("POST", "clock/advance", "{\"ms\":60001}");
        assertError(segment(uri, "alice", "{\"project_id\":[\"p1\"]}", null), 404, "sync.segment_expired");
    }

    @Test
    void segmentsAndSyncResponsesAreCompressedPerAcceptEncoding() throws Exception {
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String id = "z" + i;
            ops.add(PushCommit.Operation.upsert("tasks", id, null, RowCodec.encode(TASKS,
                    new Object[] {id, "p1", "a long enough title to make the page worth compressing " + i, false, null,
                            null, null})));
        }
        sync("alice", "z-writer", List.of(new PushCommit("z-commit", ops)), "p1", 0);
        ResponseMessage pulled = sync("alice", "z-reader", List.of(), "p1", -1, PullHeader.ACCEPT_EXTERNAL_ROWS);
        SegmentRef ref = (SegmentRef) pulled.frames().stream().filter(f -> f instanceof SegmentRef).findFirst().orElseThrow();
        assertTrue(ref.byteLength() > 1024, "the page must be large enough to be compressed");
        URI uri = base.toURI().resolve("segments/" + ref.segmentId());
        for (String coding : List.of("zstd", "gzip")) {
            HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(uri).header("X-Syncular-Actor", "alice")
                    .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}").header("Accept-Encoding", coding).GET()
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, r.statusCode());
            assertEquals(coding, r.headers().firstValue("Content-Encoding").orElse("identity"));
            java.io.InputStream in = new java.io.ByteArrayInputStream(r.body());
            in = coding.equals("zstd") ? new io.airlift.compress.zstd.ZstdInputStream(in)
                    : new java.util.zip.GZIPInputStream(in);
            byte[] plain = in.readAllBytes();
            assertEquals(ref.segmentId(), "sha256:" + java.util.HexFormat.of().formatHex(
                    java.security.MessageDigest.getInstance("SHA-256").digest(plain)), coding);
        }
    }

    private HttpResponse<byte[]> segment(URI uri, String actor, String scopes, String ifNoneMatch) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).header("X-Syncular-Scopes", scopes).GET();
        if (actor != null) b.header("X-Syncular-Actor", actor);
        if (ifNoneMatch != null) b.header("If-None-Match", ifNoneMatch);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static void assertError(HttpResponse<byte[]> r, int status, String code) {
        String body = new String(r.body());
        assertEquals(status, r.statusCode(), body);
        assertTrue(body.contains("\"code\":\"" + code + "\""), body);
    }

    @Test
    void anArmedIdempotencyFaultMissesThePushGroupsNextLookupOnceAndStoresNothing() throws Exception {
        // the push group runs in the container's transaction (web.PushGroups); the fault sits in front of it
        control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}");
        sync("alice", "c-fault", List.of(push("t0", "p1")), "p1", -1);
        assertJson(control("POST", "faults/idempotency-lookup", "{}"), "{}");
        PushResult missed = (PushResult) sync("alice", "c-fault", List.of(push("t1", "p1")), "p1", -1).frames().get(1);
        assertEquals(PushResult.Status.REJECTED, missed.status());
        PushResult.OpError error = assertInstanceOf(PushResult.OpError.class, missed.results().get(0));
        assertEquals("sync.idempotency_cache_miss", error.code());
        assertTrue(error.retryable());
        assertJson(control("GET", "max-commit-seq", null), "{\"value\":1}");
        PushResult retried = (PushResult) sync("alice", "c-fault", List.of(push("t1", "p1")), "p1", -1).frames().get(1);
        assertEquals(PushResult.Status.APPLIED, retried.status(), "the fault fires once and the miss was not stored");
        assertEquals(2L, retried.commitSeq());
    }

    @Test
    void missingActorHeaderIs401() throws Exception {
        HttpResponse<String> r = It.postBody(base.toURI().resolve("sync"), "application/vnd.syncular.sync.v2", "x");
        assertEquals(401, r.statusCode());
        assertTrue(r.body().contains("sync.auth_required"), r.body());
    }

    static PushCommit push(String id, String project) {
        return new PushCommit("commit-" + id, List.of(PushCommit.Operation.upsert("tasks", id, null,
                RowCodec.encode(TASKS, new Object[] {id, project, "title " + id, false, null, null, null}))));
    }

    private ResponseMessage sync(String actor, String clientId, List<PushCommit> pushes, String project, long cursor)
            throws Exception {
        return sync(actor, clientId, pushes, project, cursor, 3);
    }

    private ResponseMessage sync(String actor, String clientId, List<PushCommit> pushes, String project, long cursor,
                                 int accept) throws Exception {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        frames.addAll(pushes);
        frames.add(new PullHeader(0, 0, 0, accept));
        frames.add(new Subscription("s1", "tasks", Map.of("project_id", List.of(project)), null, cursor, null));
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("sync"))
                .header("Content-Type", "application/vnd.syncular.sync.v2").header("X-Syncular-Actor", actor)
                .POST(HttpRequest.BodyPublishers.ofByteArray(RequestEncoder.encode(new RequestMessage(1, frames))))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        return ResponseDecoder.decode(r.body());
    }

    private HttpResponse<String> control(String method, String path, String body) throws IOException, InterruptedException {
        return It.conformance(base, method, path, body);
    }

    private static void assertJson(HttpResponse<String> r, String expected) {
        It.assertJson(r, expected);
    }

    static List<ResponseFrame> frames(ResponseMessage m) { return m.frames(); }
}

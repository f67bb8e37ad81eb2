package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.ErrorFrame;
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
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 13 items 3 and 5 against the live endpoint: each hostile request gets its status and catalog code (never a
 * 500), operation-level refusals are stored rejections that replay identically and write nothing, socket rounds get
 * the same answers, and after each one a normal push and pull still work.
 */
@ExtendWith(ArquillianExtension.class)
class HostileInputIT extends DatabaseIsolation {
    static final String PARTITION = "it-hostile";
    static final int MAX_REQUEST_BYTES = 1024 * 1024;
    private static final List<ColumnDescriptor> NOTES = syncular.jakarta.schema.SchemaCompiler
            .load("it/vector-fixture-schema.json", HostileInputIT.class.getClassLoader())
            .table("notes").orElseThrow().descriptors();
    private static final List<ColumnDescriptor> TASKS = syncular.jakarta.schema.SchemaCompiler
            .load("it/vector-fixture-schema.json", HostileInputIT.class.getClassLoader())
            .table("tasks").orElseThrow().descriptors();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("hostile"), Map.of(
                        "syncular.schema", "it/vector-fixture-schema.json",
                        "syncular.auth.mode", "fixed",
                        "syncular.auth.fixed.actor", "it-user",
                        "syncular.auth.fixed.partition", PARTITION,
                        "syncular.auth.fixed.allowed-scopes", "*",
                        "syncular.limits.max-request-bytes", String.valueOf(MAX_REQUEST_BYTES)))
                .addAsResource("it/vector-fixture-schema.json");
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    // ------------------------------------------------------------------ helpers

    private HttpResponse<byte[]> post(byte[] body, String contentEncoding) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.toURI().resolve("sync")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/vnd.syncular.sync.v2");
        if (contentEncoding != null) b.header("Content-Encoding", contentEncoding);
        return HTTP.send(b.POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<byte[]> post(List<RequestFrame> frames) throws Exception {
        return post(RequestEncoder.encode(new RequestMessage(1, frames)), null);
    }

    private static void assertJsonError(HttpResponse<byte[]> r, int status, String code, String mentions) {
        String body = new String(r.body());
        assertEquals(status, r.statusCode(), body);
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), body);
        assertTrue(body.contains("\"code\":\"" + code + "\""), body);
        if (mentions != null) assertTrue(body.contains(mentions), body);
    }

    static PushCommit.Operation note(String id, String team, String project, String metaJson) {
        return PushCommit.Operation.upsert("notes", id, null,
                RowCodec.encode(NOTES, new Object[] {id, team, project, null, 1.5, false, metaJson, null}));
    }

    static PushCommit.Operation task(String id, String project) {
        return PushCommit.Operation.upsert("tasks", id, null, RowCodec.encode(TASKS, new Object[] {id, project}));
    }

    private static Subscription tasks(String id, String project) {
        return new Subscription(id, "tasks", Map.of("project", List.of(project)), null, -1, null);
    }

    /** A normal push and a pull of it still work: the hostile request wedged nothing. */
    private void assertServesNormally() throws Exception {
        String project = "ok-" + UUID.randomUUID();
        HttpResponse<byte[]> r = post(List.of(new ReqHeader("healthy-client", 1),
                new PushCommit("ok-" + UUID.randomUUID(), List.of(task("t-" + project, project))),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                tasks("s", project)));
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        List<ResponseFrame> frames = ResponseDecoder.decode(r.body()).frames();
        assertEquals(PushResult.Status.APPLIED, ((PushResult) frames.get(1)).status());
        assertInstanceOf(SubEnd.class, frames.get(frames.size() - 1));
        assertEquals(1, count("SELECT count(*) FROM \"tasks\" WHERE \"_sync_partition\" = ? AND \"project_id\" = ?",
                project));
    }

    private static long count(String sql, String... params) throws Exception {
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, PARTITION);
            for (int i = 0; i < params.length; i++) ps.setString(i + 2, params[i]);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String randomKey(int chars) {
        Random r = new Random(13);   // random, so the btree's compression cannot shrink it below the entry limit
        StringBuilder sb = new StringBuilder(chars);
        for (int i = 0; i < chars; i++) sb.append((char) ('!' + r.nextInt(90)));
        return sb.toString();
    }

    // ------------------------------------------------------------------ item 3: request level

    @Test
    void requestFieldsTheServerCannotStoreAre400NamingTheField() throws Exception {
        PullHeader pull = new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS);
        Map<String, List<RequestFrame>> cases = new java.util.LinkedHashMap<>();
        cases.put("clientId", List.of(new ReqHeader("nul\0client", 1), pull, tasks("s", "p")));
        cases.put("clientId ", List.of(new ReqHeader(randomKey(6000), 1), pull, tasks("s", "p")));
        cases.put("clientCommitId", List.of(new ReqHeader("c-commit-nul", 1),
                new PushCommit("commit\0id", List.of(task("t1", "p")))));
        cases.put("clientCommitId ", List.of(new ReqHeader("c-commit-big", 1),
                new PushCommit(randomKey(6000), List.of(task("t1", "p")))));
        cases.put("subscription.id", List.of(new ReqHeader("c-sub-id", 1), pull, tasks("s\0", "p")));
        cases.put("subscription.scopes", List.of(new ReqHeader("c-sub-scope", 1), pull, tasks("s", "p\0")));
        cases.put("subscription.bootstrapState", List.of(new ReqHeader("c-sub-token", 1), pull,
                new Subscription("s", "tasks", Map.of("project", List.of("p")), null, -1,
                        "{\"asOfCommitSeq\":0,\"tables\":[\"tasks\"],\"tableIndex\":0,\"rowCursor\":\"a\\u0000\"}")));
        for (Map.Entry<String, List<RequestFrame>> c : cases.entrySet()) {
            assertJsonError(post(c.getValue()), 400, "sync.invalid_request", c.getKey().trim());
        }
        assertEquals(0, count("SELECT count(*) FROM sync_push_results WHERE partition = ?"), "nothing was stored");
        assertEquals(0, count("SELECT count(*) FROM sync_clients WHERE partition = ?"));
        assertServesNormally();
    }

    // ------------------------------------------------------------------ item 3: operation level

    @Test
    void operationValuesTheDatabaseRefusesAreStoredReplayableRejectionsAndTheBatchContinues() throws Exception {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        Map<PushCommit.Operation, String> cases = new java.util.LinkedHashMap<>();
        cases.put(task("nul\0row", "p"), "nul_character");
        cases.put(task(randomKey(6000), "p"), "value_too_long");
        cases.put(task("nul-scope", "p\0"), "nul_character");
        cases.put(note("huge-exponent", "team", "p", "{\"n\":1e999999}"), "json_number_out_of_range");
        cases.put(note("deep", "team", "p", deep), "json_too_deep");
        int k = 0;
        for (Map.Entry<PushCommit.Operation, String> c : cases.entrySet()) {
            String commitId = "hostile-" + (k++);
            String good = "good-" + commitId;
            List<RequestFrame> request = List.of(new ReqHeader("c-ops", 1),
                    new PushCommit(commitId, List.of(task("before-" + commitId, "p"), c.getKey())),
                    new PushCommit(good, List.of(task(good, "p"))));
            List<ResponseFrame> first = null;
            for (int attempt = 0; attempt < 2; attempt++) {   // the second is the client's retry: same answer
                HttpResponse<byte[]> r = post(request);
                assertEquals(200, r.statusCode(), () -> c.getValue() + ": " + new String(r.body()));
                List<ResponseFrame> frames = ResponseDecoder.decode(r.body()).frames();
                PushResult rejected = (PushResult) frames.get(1);
                assertEquals(PushResult.Status.REJECTED, rejected.status(), c.getValue());
                PushResult.OpError error = (PushResult.OpError) rejected.results().get(0);
                assertEquals(1, error.opIndex(), c.getValue());
                assertEquals("sync.invalid_request", error.code(), c.getValue());
                assertEquals(c.getValue(), ((PushResultDetails) frames.get(2)).entries().get(0).details().reason());
                PushResult next = (PushResult) frames.get(3);
                assertEquals(attempt == 0 ? PushResult.Status.APPLIED : PushResult.Status.CACHED, next.status(),
                        "the batch continues with the next commit");
                if (first == null) {
                    first = frames.subList(1, 3);
                } else {
                    assertEquals(first, frames.subList(1, 3), "the replay answers the stored rejection");
                }
            }
            assertEquals(0, count("SELECT count(*) FROM \"tasks\" WHERE \"_sync_partition\" = ? AND \"id\" = ?",
                    "before-" + commitId), "nothing of the rejected commit was written");
            assertEquals(0, count("SELECT count(*) FROM sync_commits WHERE partition = ? AND client_commit_id = ?",
                    commitId));
        }
        assertEquals(0, count("SELECT count(*) FROM \"notes\" WHERE \"_sync_partition\" = ?"));
        assertServesNormally();
    }

    @Test
    void aNulEscapeInsideAJsonValueIsStoredExactly() throws Exception {
        String meta = "{\"s\":\"a\\u0000b\"}";
        HttpResponse<byte[]> r = post(List.of(new ReqHeader("c-json-nul", 1),
                new PushCommit("json-nul", List.of(note("json-nul", "team", "p", meta)))));
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        PushResult result = (PushResult) ResponseDecoder.decode(r.body()).frames().get(1);
        assertEquals(PushResult.Status.APPLIED, result.status(), result::toString);
        assertServesNormally();
    }

    @Test
    void aSocketRoundGetsTheSameAnswers() throws Exception {
        String clientId = "c-socket";
        try (RealtimeTestSocket socket = RealtimeTestSocket.open(base.toURI(), "clientId=" + clientId)) {
            socket.nextEvent(10);
            ResponseMessage refused = ResponseDecoder.decode(socket.round(RequestEncoder.encode(new RequestMessage(1,
                    List.of(new ReqHeader(clientId, 1), new PushCommit("sock\0et", List.of(task("s1", "p"))))))));
            assertInstanceOf(RespHeader.class, refused.frames().get(0));
            assertEquals("sync.invalid_request", assertInstanceOf(ErrorFrame.class, refused.frames().get(1)).code());
            ResponseMessage rejected = ResponseDecoder.decode(socket.round(RequestEncoder.encode(new RequestMessage(1,
                    List.of(new ReqHeader(clientId, 1), new PushCommit("socket-op", List.of(task("s\0", "p"))))))));
            PushResult result = (PushResult) rejected.frames().get(1);
            assertEquals(PushResult.Status.REJECTED, result.status());
            assertEquals("sync.invalid_request", ((PushResult.OpError) result.results().get(0)).code());
        }
        assertServesNormally();
    }

    // ------------------------------------------------------------------ item 5: gzip and size

    @Test
    void brokenGzipBodiesAre400AndAnOversizedBodyIs413() throws Exception {
        byte[] plain = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader("c-gzip", 1),
                new PushCommit("gz", List.of(task("gz", "p" + "x".repeat(300)))))));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        }
        byte[] whole = out.toByteArray();
        Map<String, byte[]> broken = new java.util.LinkedHashMap<>();
        broken.put("empty", new byte[0]);
        broken.put("magic only", new byte[] {0x1f, (byte) 0x8b});
        broken.put("header only", Arrays.copyOf(whole, 10));
        broken.put("truncated", Arrays.copyOf(whole, whole.length / 2));
        broken.put("trailer cut", Arrays.copyOf(whole, whole.length - 3));
        for (Map.Entry<String, byte[]> b : broken.entrySet()) {
            HttpResponse<byte[]> r = post(b.getValue(), "gzip");
            assertJsonError(r, 400, "sync.invalid_request", null);
        }
        assertEquals(0, count("SELECT count(*) FROM \"tasks\" WHERE \"_sync_partition\" = ? AND \"id\" = ?", "gz"));

        byte[] oversized = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader("c-big", 1),
                new PushCommit("big", List.of(note("big", "team", "p", "\"" + "z".repeat(MAX_REQUEST_BYTES) + "\""))))));
        assertJsonError(post(oversized, null), 413, "sync.invalid_request", "max-request-bytes");
        ByteArrayOutputStream big = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(big)) {
            gz.write(oversized);
        }
        assertJsonError(post(big.toByteArray(), "gzip"), 413, "sync.invalid_request", "max-request-bytes");
        assertServesNormally();
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.PushResultDetails;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;

/**
 * The conformance host's {@code validators} and {@code commit-validator} routes (issue #6) installing real §6.7/§6.8
 * validators: the rejection records, the exact PUSH_RESULT_DETAILS, storage with the outcome and byte-equal replay,
 * route contracts and errors, {@code []} / no spec = off, and reset clearing both.
 */
@ExtendWith(ArquillianExtension.class)
class ValidatorsConformanceIT extends DatabaseIsolation {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("validators-conf"), Map.of("syncular.conformance-host", "true"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void reset() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = control("POST", "reset", "{\"schema\":" + ConformanceHostIT.TASKS_SCHEMA
                + ",\"partition\":\"val-p\",\"nowMs\":1782993600000}");
        assertJson(r, ConformanceHostIT.CAPABILITIES);
        assertJson(control("PUT", "actors/alice/allowed", "{\"project_id\":[\"p1\"]}"), "{}");
    }

    private static PushCommit.Operation op(String id, String title, boolean done, Long priority) {
        return PushCommit.Operation.upsert("tasks", id, null, RowCodec.encode(ConformanceHostIT.TASKS,
                new Object[] {id, "p1", title, done, priority, null, null}));
    }

    @Test
    void maxLengthRejectsWithTheRulesCodeAndExactDetailsStoredAndReplayed() throws Exception {
        assertJson(control("POST", "validators", "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"maxLength\","
                + "\"column\":\"title\",\"max\":5,\"code\":\"app.title_too_long\"}}]"), "{}");
        PushCommit commit = new PushCommit("c-long", List.of(op("t1", "short", false, null),
                op("t2", "\uD83D\uDE00\uD83D\uDE00\uD83D\uDE00", false, null)));  // 6 UTF-16 code units
        List<ResponseFrame> first = push("alice", "cl-1", commit);
        PushResult result = (PushResult) first.get(1);
        assertEquals(PushResult.Status.REJECTED, result.status());
        assertEquals(List.of(new PushResult.OpError(1, "app.title_too_long", "title exceeds 5 characters (§6.7)",
                false)), result.results());
        PushResultDetails details = (PushResultDetails) first.get(2);
        assertEquals(1, details.entries().get(0).opIndex());
        assertEquals("{\"fieldPaths\":[\"title\"],\"reason\":\"max_length_exceeded\",\"requiredAction\":\"edit_fields\"}",
                details.entries().get(0).details().toJson());
        assertJson(control("GET", "tables/tasks/rows", null), "[]");

        // replay after the validator is gone: the stored outcome, not a re-run
        assertJson(control("POST", "validators", "[]"), "{}");
        assertEquals(first, push("alice", "cl-1", commit));
        // and off really is off
        assertEquals(PushResult.Status.APPLIED, ((PushResult) push("alice", "cl-1",
                new PushCommit("c-long-2", List.of(op("t2", "a long title", false, null)))).get(1)).status());
    }

    @Test
    void immutableWhenGuardsTheStoredRowOnUpdateOnly() throws Exception {
        assertJson(control("POST", "validators", "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"immutableWhen\","
                + "\"column\":\"title\",\"guardColumn\":\"done\",\"guardValue\":true,\"code\":\"app.locked\"}}]"), "{}");
        // an insert is never an update: applied even with the guard value
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "ci", new PushCommit("i1",
                List.of(op("t1", "first", true, null), op("t2", "open", false, null))))));
        // the stored t1 is done: changing its title is rejected; changing another column is not
        List<ResponseFrame> rejected = push("alice", "ci", new PushCommit("u1", List.of(op("t1", "second", true, null))));
        assertEquals(PushResult.Status.REJECTED, status(rejected));
        assertEquals("app.locked", ((PushResult.OpError) ((PushResult) rejected.get(1)).results().get(0)).code());
        assertEquals("{\"fieldPaths\":[\"title\"],\"reason\":\"immutable_state\",\"requiredAction\":\"keep_server\"}",
                ((PushResultDetails) rejected.get(2)).entries().get(0).details().toJson());
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "ci",
                new PushCommit("u2", List.of(op("t1", "first", true, 9L))))));
        // the guard reads the STORED row: t2 stored as not done, so this update (which sets done) may change title
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "ci",
                new PushCommit("u3", List.of(op("t2", "renamed", true, null))))));
        String rows = control("GET", "tables/tasks/rows", null).body();
        assertTrue(rows.contains("\"title\":\"first\",\"done\":true,\"priority\":9"), rows);
        assertTrue(rows.contains("\"title\":\"renamed\""), rows);
    }

    @Test
    void requireSiblingWhenBlamesTheFirstTriggerAndAcceptsTheAggregate() throws Exception {
        assertJson(control("POST", "commit-validator", "{\"spec\":{\"kind\":\"requireSiblingWhen\",\"table\":\"tasks\","
                + "\"column\":\"done\",\"equals\":true,\"siblingRowIdSuffix\":\"-audit\",\"code\":\"app.needs_audit\"}}"),
                "{}");
        List<ResponseFrame> rejected = push("alice", "cs", new PushCommit("s1",
                List.of(op("x", "plain", false, null), op("t1", "closing", true, null), op("t2", "closing", true, null))));
        PushResult r = (PushResult) rejected.get(1);
        assertEquals(PushResult.Status.REJECTED, r.status());
        assertEquals(1, r.results().get(0).opIndex());
        assertEquals("app.needs_audit", ((PushResult.OpError) r.results().get(0)).code());
        assertEquals("{\"fieldPaths\":[\"done\"],\"reason\":\"missing_sibling_operation\","
                + "\"requiredAction\":\"repair_aggregate\"}",
                ((PushResultDetails) rejected.get(2)).entries().get(0).details().toJson());
        assertJson(control("GET", "tables/tasks/rows", null), "[]");
        assertJson(control("GET", "max-commit-seq", null), "{\"value\":0}");

        // the sibling may come before the trigger
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "cs", new PushCommit("s2",
                List.of(op("t1-audit", "audit", false, null), op("t1", "closing", true, null))))));
        assertEquals(rejected, push("alice", "cs", new PushCommit("s1", List.of(op("x", "changed", false, null)))),
                "the stored rejection is replayed, the validator is not rerun");

        assertJson(control("POST", "commit-validator", "{}"), "{}");
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "cs", new PushCommit("s3",
                List.of(op("t3", "closing", true, null))))));
    }

    @Test
    void badSpecsAre400AndResetClearsEveryValidator() throws Exception {
        assertError(control("POST", "validators", "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"regex\",\"column\":\"title\","
                + "\"code\":\"app.x\"}}]"), 400);
        assertError(control("POST", "validators", "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"maxLength\","
                + "\"column\":\"title\",\"max\":1,\"code\":\"sync.reserved\"}}]"), 400);
        assertError(control("POST", "validators", "[{\"table\":\"nope\",\"rule\":{\"kind\":\"maxLength\","
                + "\"column\":\"title\",\"max\":1,\"code\":\"app.x\"}}]"), 400);
        assertError(control("POST", "validators", "{\"table\":\"tasks\"}"), 400);
        assertError(control("POST", "commit-validator", "{\"spec\":{\"kind\":\"other\"}}"), 400);

        assertJson(control("POST", "validators", "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"maxLength\","
                + "\"column\":\"title\",\"max\":1,\"code\":\"app.short\"}}]"), "{}");
        assertJson(control("POST", "commit-validator", "{\"spec\":{\"kind\":\"requireSiblingWhen\",\"table\":\"tasks\","
                + "\"column\":\"done\",\"equals\":true,\"siblingRowIdSuffix\":\"-a\",\"code\":\"app.sib\"}}"), "{}");
        assertEquals(PushResult.Status.REJECTED, status(push("alice", "cr", new PushCommit("r1",
                List.of(op("t1", "long title", false, null))))));
        reset();
        assertEquals(PushResult.Status.APPLIED, status(push("alice", "cr", new PushCommit("r1",
                List.of(op("t1", "long title", true, null))))));
    }

    private static PushResult.Status status(List<ResponseFrame> frames) { return ((PushResult) frames.get(1)).status(); }

    private List<ResponseFrame> push(String actor, String clientId, PushCommit commit) throws Exception {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        frames.add(commit);
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("sync"))
                .header("Content-Type", "application/vnd.syncular.sync.v2").header("X-Syncular-Actor", actor)
                .POST(HttpRequest.BodyPublishers.ofByteArray(RequestEncoder.encode(new RequestMessage(1, frames))))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        ResponseMessage m = ResponseDecoder.decode(r.body());
        return m.frames();
    }

    private HttpResponse<String> control(String method, String path, String body) throws IOException, InterruptedException {
        return It.conformance(base, method, path, body);
    }

    private static void assertJson(HttpResponse<String> r, String expected) {
        It.assertJson(r, expected);
    }

    private static void assertError(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(r.body().contains("\"code\":\"sync.invalid_request\""), r.body());
        assertFalse(r.body().isEmpty());
    }
}

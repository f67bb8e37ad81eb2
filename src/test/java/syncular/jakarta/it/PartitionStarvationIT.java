package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.ErrorFrame;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.Subscription;

/**
 * Issue 13 item 7: one partition can never starve the others. Partition "busy" has its lock held by somebody who
 * does not let go (here: this test's own database session) and 40 pushes queued behind it; a round of partition
 * "calm" is still served while that lock is held, and every busy push ends with the retryable
 * {@code sync.rate_limited} instead of holding a pooled connection until the pool is empty. Before the fix the
 * waiting pushes took all 32 pooled connections and the calm round never got one.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class PartitionStarvationIT extends DatabaseIsolation {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("starvation"), Map.of("syncular.auth.mode", "jwt",
                "syncular.auth.jwt.hs256-secret", JwtAuthIT.SECRET,
                "syncular.limits.lock-timeout-ms", "1000", "syncular.limits.partition-wait-ms", "1000"));
    }

    @ArquillianResource
    URL base;

    @Test
    void aHeldPartitionLockAndItsQueueLeaveOtherPartitionsServed() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        assertEquals(PushResult.Status.APPLIED, push("busy", "b-first").status());
        assertEquals(PushResult.Status.APPLIED, push("calm", "c-first").status());

        List<CompletableFuture<HttpResponse<byte[]>>> queued = new ArrayList<>();
        try (Connection holder = It.jdbc()) {
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement(
                    "SELECT 1 FROM sync_partitions WHERE partition = 'busy' FOR UPDATE")) {
                ps.executeQuery().close();
            }
            for (int i = 0; i < 40; i++) queued.add(send("busy", "b-" + i));
            awaitLockWaiters(1);

            // the lock is still held: calm is served all the same
            HttpResponse<byte[]> calm = send("calm", "c-during").get(60, TimeUnit.SECONDS);
            assertEquals(200, calm.statusCode(), () -> new String(calm.body()));
            assertEquals(PushResult.Status.APPLIED, result(ResponseDecoder.decode(calm.body())).status());

            // every busy push ends while the lock is still held, each retryable and with nothing stored
            for (CompletableFuture<HttpResponse<byte[]>> f : queued) {
                HttpResponse<byte[]> r = f.get(120, TimeUnit.SECONDS);
                assertBusy(r);
            }
            holder.rollback();
        }
        assertEquals(1, commits("busy"), "none of the refused pushes was stored");
        assertEquals(PushResult.Status.APPLIED, push("busy", "b-after").status(), "busy serves again");
    }

    /** 429 {@code sync.rate_limited} before the body began, or the same code in-band after RESP_HEADER. */
    private static void assertBusy(HttpResponse<byte[]> r) {
        String text = new String(r.body(), java.nio.charset.StandardCharsets.ISO_8859_1);
        if (r.statusCode() == 429) {
            assertTrue(text.contains("\"code\":\"sync.rate_limited\""), text);
            assertTrue(text.contains("\"retryable\":true"), text);
            return;
        }
        assertEquals(200, r.statusCode(), text);
        ResponseMessage m = ResponseDecoder.decode(r.body());
        ErrorFrame error = m.frames().stream().filter(ErrorFrame.class::isInstance).map(ErrorFrame.class::cast)
                .findFirst().orElseThrow(() -> new AssertionError("no in-band error: " + m.frames()));
        assertEquals("sync.rate_limited", error.code());
    }

    private PushResult push(String partition, String commitId) throws Exception {
        HttpResponse<byte[]> r = send(partition, commitId).get(60, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        return result(ResponseDecoder.decode(r.body()));
    }

    private static PushResult result(ResponseMessage m) {
        return m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast).findFirst()
                .orElseThrow(() -> new AssertionError("no PUSH_RESULT: " + m.frames()));
    }

    private CompletableFuture<HttpResponse<byte[]>> send(String partition, String commitId) throws Exception {
        String token = JwtAuthIT.token(new JWTClaimsSet.Builder().subject("actor-" + partition)
                .claim("partition", partition).claim("scopes", Map.of("list_id", List.of("l1")))
                .expirationTime(new Date(System.currentTimeMillis() + 600_000)).build(), JwtAuthIT.SECRET);
        String row = commitId + "-row";
        byte[] body = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader("client-" + partition, 1),
                new PushCommit(commitId, List.of(PushCommit.Operation.upsert("todos", row, null,
                        SyncTestClient.todo(row, "l1", "t", false, 1)))),
                new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                new Subscription("s", "todos", Map.of("list_id", List.of("l1")), null, -1, null))));
        URI sync = base.toURI().resolve("sync");
        return HTTP.sendAsync(HttpRequest.newBuilder(sync).timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/vnd.syncular.sync.v2").header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static long commits(String partition) throws Exception {
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM sync_commits WHERE partition = ?")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Polls PostgreSQL's own view until some push waits on the held lock (bounded). */
    private static void awaitLockWaiters(int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Connection c = It.jdbc(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND wait_event_type = 'Lock'")) {
            while (System.nanoTime() < deadline) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) >= n) return;
                }
                Thread.sleep(20);
            }
        }
        throw new AssertionError("no push ever waited on the held lock");
    }
}

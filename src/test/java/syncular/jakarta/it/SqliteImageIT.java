package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;

/**
 * SQLite bootstrap images (SPEC §5.3) inside the application server: the WAR's SQLite driver loads its native library
 * on every deployment of a redeploy loop (each class loader its own copy), a whole-table bootstrap comes as one
 * image, and the image the direct endpoint serves opens with the SQLite JDBC driver and holds exactly the bootstrap
 * rows at their versions.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class SqliteImageIT extends DatabaseIsolation {
    static final String PARTITION = "it-images";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @ArquillianResource
    Deployer deployer;

    @Deployment(name = "images", managed = false, testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("images"), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "it-user",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.auth.fixed.allowed-scopes", "*"));
    }

    @Test
    void everyDeploymentOfARedeployLoopServesImagesThatOpenWithTheSqliteDriver() throws Exception {
        URI base = It.base("images");
        for (int round = 0; round < 3; round++) {
            deployer.deploy("images");
            try {
                It.await(base.resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
                bootstrapThroughAnImage(base, round);
            } finally {
                deployer.undeploy("images");
            }
        }
    }

    private static void bootstrapThroughAnImage(URI base, int round) throws Exception {
        String list = "img-" + round + "-" + UUID.randomUUID();
        SyncTestClient writer = new SyncTestClient(base, "writer-" + list, list);
        List<String> expected = new ArrayList<>();
        for (int batch = 0; batch < 3; batch++) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                // row ids unique per round: an update keeps a row's stored scope (§3.4), so reusing one would not
                // move it into this round's list
                String id = String.format("r%d-%03d", round, batch * 20 + i);
                ops.add(PushCommit.Operation.upsert("todos", id, null,
                        SyncTestClient.todo(id, list, "title " + id, i % 2 == 0, i)));
                expected.add(id + "|" + list + "|title " + id + "|" + (i % 2 == 0 ? 1 : 0) + "|" + i + "|1");
            }
            ResponseMessage pushed = writer.send(new RequestMessage(1, List.of(new ReqHeader(writer.clientId, 1),
                    new PushCommit("seed-" + batch, ops))));
            assertEquals(PushResult.Status.APPLIED, ((PushResult) pushed.frames().get(1)).status(),
                    "round " + round + ": " + pushed.frames());
        }

        SyncTestClient reader = new SyncTestClient(base, "reader-" + list, list);
        int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;
        ResponseMessage m = reader.send(new RequestMessage(1, List.of(new ReqHeader(reader.clientId, 1),
                new PullHeader(0, 10, 1, accept), reader.subscription())));
        List<ResponseFrame> refs = m.frames().stream().filter(f -> f instanceof SegmentRef).toList();
        assertEquals(1, refs.size(), "round " + round + ": one image, not six rows pages: " + m.frames());
        SegmentRef ref = (SegmentRef) refs.get(0);
        assertEquals(SegmentRef.MediaType.SQLITE, ref.mediaType());
        assertEquals(60, ref.rowCount());
        SubEnd end = (SubEnd) m.frames().stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow();
        assertNull(end.bootstrapStateJson(), "the image completes the table");
        assertEquals(ref.asOfCommitSeq(), end.nextCursor());

        HttpResponse<byte[]> download = HTTP.send(HttpRequest.newBuilder(base.resolve("segments/" + ref.segmentId()))
                .header("X-Syncular-Scopes", "{\"list_id\":[\"" + list + "\"]}").GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, download.statusCode());
        assertEquals(ref.byteLength(), download.body().length);
        Path file = Files.write(Files.createTempFile("it-image-", ".sqlite"), download.body());
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            List<String> rows = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT id, list_id, title, done, position, _syncular_version"
                    + " FROM todos ORDER BY id")) {
                while (rs.next()) {
                    rows.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3) + "|" + rs.getInt(4)
                            + "|" + rs.getLong(5) + "|" + rs.getLong(6));
                }
            }
            assertEquals(expected, rows, "exactly the bootstrap rows");
            try (ResultSet rs = s.executeQuery("SELECT format, \"table\", \"asOfCommitSeq\", \"scopeDigest\","
                    + " \"rowCount\" FROM _syncular_segment")) {
                assertTrue(rs.next());
                assertEquals(1, rs.getInt(1));
                assertEquals("todos", rs.getString(2));
                assertEquals(ref.asOfCommitSeq(), rs.getLong(3));
                assertEquals(ref.scopeDigest(), rs.getString(4));
                assertEquals(60, rs.getLong(5));
                assertFalse(rs.next());
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }
}

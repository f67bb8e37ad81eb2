package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseMessage;

/**
 * {@code POST admin/log-epochs} (SPEC §2.1 backup restore, issue 19's first part) on both servers: behind the
 * {@code syncular-admin} role like every admin route; it gives the partition a new epoch, so a client that holds the
 * old one is answered {@code resetRequired} with the new one and is served again once it carries it.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class LogEpochRotationIT extends DatabaseIsolation {
    private static final String PARTITION = "it-restore";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("logepochs"), Map.of("syncular.auth.mode", "fixed",
                "syncular.auth.fixed.partition", PARTITION, "syncular.auth.fixed.allowed-scopes", "*"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    private URI rotate(String query) throws Exception {
        return base.toURI().resolve("admin/log-epochs" + query);
    }

    private HttpResponse<String> post(URI uri, String user, String password) throws Exception {
        return It.postBodyWithHeader(uri, "application/json", "", "Authorization",
                CheckpointAdminIT.basic(user, password));
    }

    private static RespHeader header(SyncTestClient client, String epoch) throws Exception {
        ResponseMessage r = client.send(new RequestMessage(2, List.of(new ReqHeader("client-restore", 1, epoch),
                new PullHeader(0, 0, 0, 3), client.subscription())));
        return assertInstanceOf(RespHeader.class, r.frames().get(0));
    }

    @Test
    void aRotationResetsEveryClientOfThePartitionOntoTheNewEpoch() throws Exception {
        SyncTestClient client = new SyncTestClient(base.toURI(), "client-restore", "restore");
        String before = header(client, null).logEpoch();
        assertFalse(header(client, before).resetRequired(), "served on the epoch it acquired");

        HttpResponse<String> r = post(rotate(""), "admin1", "Adm1n!pass");
        assertEquals(200, r.statusCode(), r.body());
        Matcher m = Pattern.compile("\\{\"partition\":\"" + PARTITION + "\",\"logEpoch\":\"([^\"]+)\"}")
                .matcher(r.body());
        assertTrue(m.find(), r.body());
        String after = m.group(1);
        assertNotEquals(before, after);

        RespHeader stale = header(client, before);
        assertTrue(stale.resetRequired(), "a client on the old epoch resets");
        assertEquals(after, stale.logEpoch());
        assertFalse(header(client, after).resetRequired(), "and is served on the new one");
    }

    @Test
    void anUnknownOrEmptyPartitionIsNotFoundAndRotatesNothing() throws Exception {
        SyncTestClient client = new SyncTestClient(base.toURI(), "client-restore", "restore-unknown");
        String epoch = header(client, null).logEpoch();
        for (String query : List.of("?partition=no-such-partition", "?partition=")) {
            HttpResponse<String> r = post(rotate(query), "admin1", "Adm1n!pass");
            assertEquals(404, r.statusCode(), query + ": " + r.body());
            assertTrue(r.body().contains("\"code\":\"sync.not_found\""), r.body());
        }
        assertFalse(header(client, epoch).resetRequired(), "the partition's epoch was not rotated");
    }

    @Test
    void onlyAnAdminMayRotate() throws Exception {
        assertEquals(401, It.post(rotate("")).statusCode());
        assertEquals(403, post(rotate(""), "plain1", "Pl41n!pass").statusCode());
    }
}

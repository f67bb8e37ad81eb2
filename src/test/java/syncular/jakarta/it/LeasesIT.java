package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.context.Dependent;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.host.AuthorityUnavailable;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.wire.Lease;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;

/**
 * SPEC §7.3 auth leases as a deployer configures them ({@code syncular.leases.*}) on both servers: authorized rounds
 * carry the same lease, a deployer's resolver that signals an outage with {@link AuthorityUnavailable} gets rounds
 * served from the lease, the admin route revokes it (behind the {@code syncular-admin} role), the revoked lease fails
 * the outage round with {@code sync.auth_lease_revoked}, and the next live round mints a fresh one.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class LeasesIT extends DatabaseIsolation {
    private static final String PARTITION = "it-leases";
    /** The switch of the resolver below: while this file exists, the permissions service is "down". */
    private static final Path OUTAGE = Path.of(System.getProperty("java.io.tmpdir"),
            "syncular-it-authority-outage-" + ProcessHandle.current().pid());

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("leases").addClasses(OutageSwitchResolver.class), Map.of(
                "syncular.auth.mode", "fixed",
                "syncular.auth.fixed.actor", "lease-actor",
                "syncular.auth.fixed.partition", PARTITION,
                "syncular.leases.ttl-ms", "3600000",
                "syncular.leases.signing-key", Base64.getEncoder().encodeToString(
                        "an IT signing key of 32+ bytes....".getBytes()),
                "it.authority-outage-file", OUTAGE.toString()));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        Files.deleteIfExists(OUTAGE);
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    @AfterEach
    void liveAgain() throws Exception { Files.deleteIfExists(OUTAGE); }

    private static Lease lease(ResponseMessage m) {
        List<Lease> leases = m.frames().stream().filter(f -> f instanceof Lease).map(Lease.class::cast).toList();
        assertEquals(1, leases.size(), "one LEASE per authorized round: " + m.frames());
        assertInstanceOf(Lease.class, m.frames().get(1), "LEASE right after RESP_HEADER");
        return leases.get(0);
    }

    private HttpResponse<String> revoke(String leaseId, String query, String user, String password) throws Exception {
        URI uri = base.toURI().resolve("admin/leases/" + leaseId + "/revoke" + query);
        return user == null ? It.post(uri) : It.postBodyWithHeader(uri, "application/json", "", "Authorization",
                CheckpointAdminIT.basic(user, password));
    }

    @Test
    void leasesAreIssuedServeAnOutageAndAreRevokedByTheOperator() throws Exception {
        SyncTestClient client = new SyncTestClient(base.toURI(), "lease-client", "lease-list");
        Lease first = lease(client.round(List.of(client.upsert("l1", "online", null))));
        Lease again = lease(client.round(List.of()));
        assertEquals(first.leaseId(), again.leaseId(), "a refresh slides the same lease");
        assertTrue(again.expiresAtMs() >= first.expiresAtMs());

        Files.createFile(OUTAGE);
        ResponseMessage served = client.round(List.of(client.upsert("l2", "during the outage", null)));
        assertTrue(served.frames().stream().noneMatch(f -> f instanceof Lease), "no refresh during an outage");
        assertEquals(PushResult.Status.APPLIED, served.frames().stream().filter(f -> f instanceof PushResult)
                .map(f -> ((PushResult) f).status()).findFirst().orElseThrow(), "the lease authorized the write");
        assertTrue(client.replica.containsKey("l2"), "and the pull on the leased scopes");

        assertEquals(401, revoke(first.leaseId(), "?partition=" + PARTITION, null, null).statusCode());
        assertEquals(403, revoke(first.leaseId(), "?partition=" + PARTITION, "plain1", "Pl41n!pass").statusCode());
        HttpResponse<String> missing = revoke("lease_nobody", "?partition=" + PARTITION, "admin1", "Adm1n!pass");
        assertEquals(404, missing.statusCode(), missing.body());
        assertTrue(missing.body().contains("\"code\":\"sync.not_found\""), missing.body());
        assertEquals(400, revoke(first.leaseId(), "", "admin1", "Adm1n!pass").statusCode(), "the partition is named");
        HttpResponse<String> revoked = revoke(first.leaseId(), "?partition=" + PARTITION, "admin1", "Adm1n!pass");
        assertEquals(200, revoked.statusCode(), revoked.body());

        HttpResponse<byte[]> refused = client.post(RequestEncoder.encode(new RequestMessage(1, List.of(
                new syncular.jakarta.wire.ReqHeader(client.clientId, 1), client.upsert("l3", "blocked", null)))),
                false);
        assertEquals(401, refused.statusCode());
        assertTrue(new String(refused.body()).contains("\"code\":\"sync.auth_lease_revoked\""),
                new String(refused.body()));

        Files.delete(OUTAGE);
        Lease fresh = lease(client.round(List.of()));
        assertNotEquals(first.leaseId(), fresh.leaseId(), "the revoked handle never resurrects");
        assertFalse(client.replica.containsKey("l3"), "the refused write never landed");
    }
}

/**
 * A deployer's resolver: every list, unless the outage file exists, when it signals §7.3.3 "the authority is
 * unreachable" instead of answering. Top level, so the WAR needs nothing else of the test class.
 */
@Dependent
class OutageSwitchResolver implements ScopeResolver {
    @Override
    public Map<String, List<String>> resolveScopes(Identity identity) {
        Path outage = Path.of(ConfigProvider.getConfig().getValue("it.authority-outage-file", String.class));
        if (Files.exists(outage)) throw new AuthorityUnavailable("the permissions service is unreachable");
        return Map.of("list_id", List.of("*"));
    }
}

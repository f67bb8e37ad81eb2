package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.sync.SignedUrls;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.Subscription;

/**
 * SPEC §5.4 signed segment URLs as a deployer configures them ({@code syncular.signed-urls.*}, JWT authentication) on
 * both servers: a pull with accept bit 3 gets a URL on every descriptor, rows pages and the SQLite image alike; the URL
 * is fetched with no credentials at all (the direct endpoint answers the same request 401) and yields the
 * content-addressed bytes; a tampered signature, claim or path is 403 {@code sync.forbidden}; a genuine but expired
 * token is 404 {@code sync.segment_expired}; a pull without bit 3 gets no URL.
 */
@ExtendWith(ArquillianExtension.class)
class SignedUrlsIT extends DatabaseIsolation {
    private static final String JWT_SECRET = "it-secret-it-secret-it-secret-32";
    private static final byte[] URL_SECRET = "an IT signed-url secret, 32 b+..".getBytes(StandardCharsets.UTF_8);
    private static final String PARTITION = "it-signed";
    private static final String LIST = "l1";
    private static final int ROWS = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("signed"), Map.of(
                "syncular.auth.mode", "jwt",
                "syncular.auth.jwt.hs256-secret", JWT_SECRET,
                "syncular.auth.jwt.issuer", "it-issuer",
                "syncular.limits.inline-segment-max-bytes", "1",
                "syncular.signed-urls.secret", Base64.getEncoder().encodeToString(URL_SECRET),
                "syncular.signed-urls.base-url", It.base("signed").resolve("segments").toString(),
                "syncular.signed-urls.ttl-ms", "600000"));
    }

    @ArquillianResource
    URL base;

    private String bearer;

    @BeforeEach
    void seed() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        bearer = "Bearer " + JwtAuthIT.token(new JWTClaimsSet.Builder().subject("alice").issuer("it-issuer")
                .claim("partition", PARTITION).claim("scopes", Map.of("list_id", List.of(LIST)))
                .expirationTime(new Date(System.currentTimeMillis() + 600_000)).build(), JWT_SECRET);
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ops.add(PushCommit.Operation.upsert("todos", "t" + i, null,
                    SyncTestClient.todo("t" + i, LIST, "todo " + i, false, i)));
        }
        // idempotent by its commit id: every test sees the same five rows
        HttpResponse<byte[]> pushed = sync(List.of(new ReqHeader("seeder", 1), new PushCommit("seed-five", ops)));
        assertEquals(200, pushed.statusCode(), () -> new String(pushed.body()));
    }

    private HttpResponse<byte[]> sync(List<RequestFrame> frames) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("sync"))
                .header("Content-Type", "application/vnd.syncular.sync.v2").header("Authorization", bearer)
                .POST(HttpRequest.BodyPublishers.ofByteArray(RequestEncoder.encode(new RequestMessage(1, frames))))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private List<SegmentRef> bootstrap(String client, int accept) throws Exception {
        HttpResponse<byte[]> r = sync(List.of(new ReqHeader(client, 1), new PullHeader(0, 2, 50, accept),
                new Subscription("s", "todos", Map.of("list_id", List.of(LIST)), null, -1, null)));
        assertEquals(200, r.statusCode(), () -> new String(r.body()));
        List<SegmentRef> refs = ResponseDecoder.decode(r.body()).frames().stream()
                .filter(f -> f instanceof SegmentRef).map(SegmentRef.class::cast).toList();
        assertFalse(refs.isEmpty(), "the bootstrap travels by reference");
        return refs;
    }

    /** A bare GET: no Authorization, no X-Syncular-Scopes, nothing but the URL. */
    private static HttpResponse<byte[]> fetch(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static void assertRefused(int status, String code, HttpResponse<byte[]> r, String why) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(status, r.statusCode(), why + ": " + body);
        assertTrue(body.contains("\"" + code + "\""), why + ": " + body);
    }

    @Test
    void aBit3ClientGetsUrlsItFetchesWithNoCredentials() throws Exception {
        List<SegmentRef> rows = bootstrap("c-rows", ROWS | PullHeader.ACCEPT_SIGNED_URLS);
        assertEquals(3, rows.size(), "five rows in pages of two");
        List<SegmentRef> image = bootstrap("c-image", ROWS | PullHeader.ACCEPT_SQLITE | PullHeader.ACCEPT_SIGNED_URLS);
        assertEquals(SegmentRef.MediaType.SQLITE, image.get(0).mediaType());
        List<SegmentRef> all = new ArrayList<>(rows);
        all.addAll(image);
        for (SegmentRef ref : all) {
            assertTrue(ref.url().startsWith(It.base("signed") + "segments/" + ref.segmentId() + "?st="), ref.url());
            assertTrue(ref.urlExpiresAtMs() > System.currentTimeMillis() + 500_000, "the configured 10 min TTL");
            HttpResponse<byte[]> got = fetch(ref.url());
            assertEquals(200, got.statusCode(), () -> new String(got.body()));
            assertEquals(ref.segmentId(), SegmentStore.segmentId(got.body()), "§5.1 content address");
            assertTrue(got.headers().firstValue("Cache-Control").orElse("").startsWith("public, max-age="),
                    got.headers().map().toString());
        }
        HttpResponse<byte[]> direct = fetch(base + "segments/" + rows.get(0).segmentId());
        assertRefused(401, "sync.auth_required", direct, "the same segment without the token needs credentials");
    }

    @Test
    void tamperedAndExpiredUrlsAreRefused() throws Exception {
        List<SegmentRef> rows = bootstrap("c-tamper", ROWS | PullHeader.ACCEPT_SIGNED_URLS);
        SegmentRef ref = rows.get(0);
        String url = ref.url();
        String token = url.substring(url.indexOf("?st=") + 4);
        String payload = token.substring(0, token.indexOf('.'));
        String mac = token.substring(token.indexOf('.') + 1);
        String path = url.substring(0, url.indexOf("?st="));

        char last = mac.charAt(mac.length() - 1);
        assertRefused(403, "sync.forbidden", fetch(path + "?st=" + payload + "."
                + mac.substring(0, mac.length() - 1) + (last == 'A' ? 'B' : 'A')), "a changed signature");
        String claims = new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8);
        String later = Base64.getUrlEncoder().withoutPadding().encodeToString(
                claims.replace("\"exp\":", "\"exp\":9").getBytes(StandardCharsets.UTF_8));
        assertRefused(403, "sync.forbidden", fetch(path + "?st=" + later + "." + mac), "a changed expiry");
        assertRefused(403, "sync.forbidden", fetch(base + "segments/" + rows.get(1).segmentId() + "?st=" + token),
                "another segment's path");
        assertRefused(403, "sync.forbidden", fetch(path + "?st="), "an empty token");

        // a genuine token past its expiry: minted as any node would, under the shared secret
        SignedUrls node = new SignedUrls(URL_SECRET, base + "segments", () -> 1000);
        String expired = node.issue(ref.segmentId(), ref.scopeDigest(), PARTITION,
                System.currentTimeMillis() - 120_000).url();
        assertRefused(404, "sync.segment_expired", fetch(expired), "an expired URL: re-pull for a fresh one");
        String live = node.issue(ref.segmentId(), ref.scopeDigest(), PARTITION, System.currentTimeMillis()).url();
        assertEquals(200, fetch(live).statusCode(), "the same secret on another node verifies here");
    }

    @Test
    void aClientWithoutBit3GetsNoUrl() throws Exception {
        for (SegmentRef ref : bootstrap("c-plain", ROWS | PullHeader.ACCEPT_SQLITE)) {
            assertNull(ref.url(), "§4.2/§5.4: no bit 3, no url");
            assertNull(ref.urlExpiresAtMs());
        }
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.OperateOnDeployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowCodec;

/**
 * Blob URLs on a deployed server (SPEC §5.9.3, §5.9.5), each fetched and written as a client does: a bare HTTP
 * request carrying nothing but the URL. Two deployments on each server:
 * <ul>
 *   <li>{@code blob-presign-s3}: {@code syncular.blobs.store=s3} with {@code syncular.blobs.urls=presigned}, against a
 *       real S3 API server (S3Proxy, started by this JVM): the grant's SigV4 PUT goes straight to the bucket, the
 *       push that first references the blob checks the bytes' content address (a poisoned PUT is never referenced),
 *       and the download answers a SigV4 GET; S3 refuses a tampered URL, another length and an expired URL, and a
 *       fresh download request recovers.</li>
 *   <li>{@code blob-signed-pg}: the PostgreSQL store with {@code syncular.blobs.urls=signed}: native HMAC URLs this
 *       server serves itself, with no credentials; tampered, expired (the host's virtual clock moved past the TTL
 *       and skew) and wrong-kind tokens are 403 {@code blob.forbidden}.</li>
 * </ul>
 * Both deployments are conformance hosts on one database and one schema, so every test first resets the one it
 * uses.
 */
@ExtendWith(ArquillianExtension.class)
class BlobPresignIT extends DatabaseIsolation {
    static final String S3_PREFIX = "presign-it-" + System.nanoTime();
    private static final String S3_DEPLOYMENT = "blob-presign-s3";
    private static final String PG_DEPLOYMENT = "blob-signed-pg";
    /**
     * Both deployments start on the schema their resets install: they share one database, and a process that finds
     * another schema at its version there rightly reports its storage not ready.
     */
    private static final String SCHEMA_RESOURCE = "it/blob-presign-schema.json";
    private static final byte[] URL_SECRET = "a BlobPresignIT signed-url secret!".getBytes(StandardCharsets.UTF_8);
    /** Short, so that the expiry test waits only seconds for S3's own clock to pass it. */
    private static final long S3_TTL_MS = 5_000;
    private static final long NOW_MS = 1_782_993_600_000L;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static S3Client s3;

    @Deployment(name = S3_DEPLOYMENT, testable = false, order = 1)
    static WebArchive s3Deployment() {
        URI endpoint = S3ProxySupport.endpoint();
        return It.withConfig(It.war(S3_DEPLOYMENT), Map.ofEntries(Map.entry("syncular.conformance-host", "true"),
                Map.entry("syncular.blobs.store", "s3"),
                Map.entry("syncular.blobs.s3.bucket", S3ProxySupport.BUCKET),
                Map.entry("syncular.blobs.s3.prefix", S3_PREFIX),
                Map.entry("syncular.blobs.s3.endpoint", endpoint.toString()),
                Map.entry("syncular.blobs.s3.path-style", "true"),
                Map.entry("syncular.blobs.s3.access-key", S3ProxySupport.ACCESS_KEY),
                Map.entry("syncular.blobs.s3.secret-key", S3ProxySupport.SECRET_KEY),
                Map.entry("syncular.blobs.urls", "presigned"),
                Map.entry("syncular.blobs.url-ttl-ms", Long.toString(S3_TTL_MS)),
                Map.entry("syncular.schema", SCHEMA_RESOURCE))).addAsResource(new StringAsset(BlobsItSupport.SCHEMA),
                SCHEMA_RESOURCE);
    }

    @Deployment(name = PG_DEPLOYMENT, testable = false, order = 2)
    static WebArchive pgDeployment() {
        return It.withConfig(It.war(PG_DEPLOYMENT), Map.of("syncular.conformance-host", "true",
                "syncular.signed-urls.secret", Base64.getEncoder().encodeToString(URL_SECRET),
                "syncular.signed-urls.base-url", It.base(PG_DEPLOYMENT).resolve("segments").toString(),
                "syncular.blobs.urls", "signed",
                "syncular.blobs.url-base", It.base(PG_DEPLOYMENT).resolve("blobs").toString(),
                "syncular.schema", SCHEMA_RESOURCE)).addAsResource(new StringAsset(BlobsItSupport.SCHEMA), SCHEMA_RESOURCE);
    }

    @ArquillianResource
    @OperateOnDeployment(S3_DEPLOYMENT)
    URL s3Base;

    @ArquillianResource
    @OperateOnDeployment(PG_DEPLOYMENT)
    URL pgBase;

    @BeforeAll
    static void client() {
        s3 = S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder()).region(Region.US_EAST_1)
                .endpointOverride(S3ProxySupport.endpoint()).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        S3ProxySupport.ACCESS_KEY, S3ProxySupport.SECRET_KEY))).build();
    }

    @AfterAll
    static void close() { s3.close(); }

    /**
     * Both deployments share one database and each test resets it through one of them: a reset that drops the
     * tables while the other deployment is still starting would fail that start for good, so no test begins before
     * both are ready.
     */
    @BeforeEach
    void bothReady() throws Exception {
        for (URL base : List.of(s3Base, pgBase)) {
            It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        }
    }

    /** Readies and resets the deployment at {@code base}: owner and reader see p1, intruder p2. */
    private static void reset(URL base) throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.conformance(base, "POST", "reset",
                "{\"schema\":" + BlobsItSupport.SCHEMA + ",\"partition\":\"blob-p\",\"nowMs\":" + NOW_MS + "}");
        assertEquals(200, r.statusCode(), r.body());
        for (String actor : List.of("owner", "reader")) {
            assertEquals(200, It.conformance(base, "PUT", "actors/" + actor + "/allowed", "{\"project_id\":[\"p1\"]}")
                    .statusCode());
        }
        assertEquals(200, It.conformance(base, "PUT", "actors/intruder/allowed", "{\"project_id\":[\"p2\"]}")
                .statusCode());
    }

    private static Map<?, ?> json(String body) { return (Map<?, ?>) Json.parse(body); }

    /** The §5.9.3 grant for {@code length} bytes, as {@code actor}. */
    private static HttpResponse<String> grant(URL base, String actor, String blobId, long length) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + blobId + "/upload-grant"))
                .header("X-Syncular-Actor", actor).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"byteLength\":" + length + "}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String grantUrl(URL base, String blobId, long length) throws Exception {
        HttpResponse<String> g = grant(base, "owner", blobId, length);
        assertEquals(200, g.statusCode(), g.body());
        assertTrue(g.headers().firstValue("Cache-Control").orElse("").contains("no-store"));
        return (String) json(g.body()).get("url");
    }

    /** The authorized download as {@code actor}; with URLs on, its JSON answer. */
    private static HttpResponse<String> download(URL base, String actor, String blobId) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("blobs/" + blobId))
                .header("X-Syncular-Actor", actor).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Map<?, ?> downloadUrl(URL base, String blobId) throws Exception {
        HttpResponse<String> d = download(base, "reader", blobId);
        assertEquals(200, d.statusCode(), d.body());
        assertTrue(d.headers().firstValue("Content-Type").orElse("").startsWith("application/json"),
                d.headers().map().toString());
        assertEquals("no-store", d.headers().firstValue("Cache-Control").orElse(""), "a bearer grant is never cached");
        return json(d.body());
    }

    /** A bare PUT: no actor, no credentials, nothing but the URL. */
    private static HttpResponse<String> barePut(String url, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A bare GET: no actor, no credentials, nothing but the URL. */
    private static HttpResponse<byte[]> bareGet(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static PushResult push(URL base, String commitId, String rowId, byte[] bytes) throws Exception {
        BlobRef ref = new BlobRef(BlobsItSupport.idOf(bytes), bytes.length, "text/plain", null);
        byte[] payload = RowCodec.encode(BlobsItSupport.ATTACHMENTS.descriptors(), new Object[] {rowId, "p1", "t",
                ref.toJson()});
        ResponseMessage m = new SyncTestClient(base.toURI(), "client-owner", "unused", "owner").send(
                new RequestMessage(1, List.of(new ReqHeader("client-owner", 1), new PushCommit(commitId,
                        List.of(PushCommit.Operation.upsert("attachments", rowId, null, payload))))));
        return m.frames().stream().filter(PushResult.class::isInstance).map(PushResult.class::cast).findFirst()
                .orElseThrow();
    }

    private static List<String> keys() {
        return s3.listObjectsV2(b -> b.bucket(S3ProxySupport.BUCKET).prefix(S3_PREFIX + "/")).contents().stream()
                .map(S3Object::key).map(k -> k.substring(S3_PREFIX.length() + 1)).sorted().toList();
    }

    private static void assertRefused(int status, String code, int gotStatus, String body, String why) {
        assertEquals(status, gotStatus, why + ": " + body);
        assertTrue(body.contains("\"" + code + "\""), why + ": " + body);
    }

    @Test
    void aPresignedPutIsReferencedOnceItsBytesCheckAndAPresignedGetServesThem() throws Exception {
        reset(s3Base);
        byte[] bytes = "presigned straight into the bucket".getBytes(StandardCharsets.UTF_8);
        String id = BlobsItSupport.idOf(bytes);
        HttpResponse<String> g = grant(s3Base, "owner", id, bytes.length);
        assertEquals(200, g.statusCode(), g.body());
        String put = (String) json(g.body()).get("url");
        assertTrue(put.startsWith(S3ProxySupport.endpoint().toString()), "the object store's URL: " + put);
        long expires = ((BigDecimal) json(g.body()).get("urlExpiresAtMs")).longValueExact();
        assertTrue(expires > System.currentTimeMillis() && expires <= System.currentTimeMillis() + S3_TTL_MS + 1_000,
                "S3's own expiry, the configured TTL from now: " + expires);
        assertEquals(200, barePut(put, bytes).statusCode());
        assertTrue(keys().contains("direct/blob-p/" + id), keys().toString());
        HttpResponse<String> early = download(s3Base, "reader", id);
        assertRefused(404, "blob.not_found", early.statusCode(), early.body(), "unchecked bytes are no blob yet");

        assertEquals(PushResult.Status.APPLIED, push(s3Base, "c1", "att1", bytes).status(),
                "the push-time existence check adopted the direct upload");
        assertTrue(keys().contains("blobs/blob-p/" + id), keys().toString());
        assertFalse(keys().contains("direct/blob-p/" + id), "the checked upload is moved, not copied: " + keys());
        assertEquals(Map.of("present", true), json(grant(s3Base, "owner", id, bytes.length).body()));

        Map<?, ?> link = downloadUrl(s3Base, id);
        String get = (String) link.get("url");
        assertTrue(get.startsWith(S3ProxySupport.endpoint().toString()), get);
        HttpResponse<byte[]> fetched = bareGet(get);
        assertEquals(200, fetched.statusCode());
        assertArrayEquals(bytes, fetched.body());
        assertEquals(id, BlobsItSupport.idOf(fetched.body()), "§5.1: the bytes hash to their id");
        HttpResponse<String> intruder = download(s3Base, "intruder", id);
        assertRefused(403, "blob.forbidden", intruder.statusCode(), intruder.body(), "no URL for another scope");
    }

    @Test
    void aPoisonedDirectPutIsNeverReferenced() throws Exception {
        reset(s3Base);
        byte[] honest = "what the id names, honestly".getBytes(StandardCharsets.UTF_8);
        byte[] forged = "what a client put instead!!".getBytes(StandardCharsets.UTF_8);
        assertEquals(honest.length, forged.length);
        String id = BlobsItSupport.idOf(honest);
        assertEquals(200, barePut(grantUrl(s3Base, id, forged.length), forged).statusCode(),
                "S3 takes any bytes of the granted length: it does not hash them");
        PushResult rejected = push(s3Base, "c-poison", "att-poison", honest);
        assertEquals(PushResult.Status.REJECTED, rejected.status());
        assertEquals("blob.not_found", ((PushResult.OpError) rejected.results().get(0)).code());
        assertTrue(keys().stream().noneMatch(k -> k.endsWith("/" + id)), "the forged bytes are gone: " + keys());

        assertEquals(200, barePut(grantUrl(s3Base, id, honest.length), honest).statusCode());
        assertEquals(PushResult.Status.APPLIED, push(s3Base, "c-honest", "att-honest", honest).status(),
                "the honest upload after it is referenced");
    }

    @Test
    @Timeout(120)
    void s3RefusesTamperedOversizedAndExpiredUrlsAndAFreshRequestRecovers() throws Exception {
        reset(s3Base);
        byte[] bytes = "guarded by the signature".getBytes(StandardCharsets.UTF_8);
        String id = BlobsItSupport.idOf(bytes);
        String hex = id.substring("sha256:".length());
        String put = grantUrl(s3Base, id, bytes.length);
        String otherHex = BlobsItSupport.idOf("elsewhere".getBytes(StandardCharsets.UTF_8)).substring("sha256:".length());
        assertEquals(403, barePut(put.replace(hex, otherHex), bytes).statusCode(), "another key");
        assertEquals(403, barePut(put, "a body of another length than granted".getBytes(StandardCharsets.UTF_8))
                .statusCode(), "the signed Content-Length");
        assertEquals(403, barePut(put.replace("X-Amz-Expires=5", "X-Amz-Expires=9"), bytes).statusCode(),
                "a longer expiry");
        assertEquals(List.of(), keys().stream().filter(k -> k.contains(hex) || k.contains(otherHex)).toList());

        assertEquals(200, barePut(put, bytes).statusCode());
        assertEquals(PushResult.Status.APPLIED, push(s3Base, "c-t", "att-t", bytes).status());
        String get = (String) downloadUrl(s3Base, id).get("url");
        int sig = get.indexOf("X-Amz-Signature=") + "X-Amz-Signature=".length();
        String flipped = get.substring(0, sig) + (get.charAt(sig) == 'a' ? 'b' : 'a') + get.substring(sig + 1);
        assertEquals(403, bareGet(flipped).statusCode(), "a changed signature");

        // S3 enforces the expiry on its own clock with no skew (§5.4): wait until it has passed there
        long expiresAt = ((BigDecimal) downloadUrl(s3Base, id).get("urlExpiresAtMs")).longValueExact();
        String stale = (String) downloadUrl(s3Base, id).get("url");
        String stalePut = grantUrl(s3Base, BlobsItSupport.idOf("late".getBytes(StandardCharsets.UTF_8)), 4);
        while (System.currentTimeMillis() <= expiresAt + 2_000) Thread.sleep(200);
        assertEquals(403, bareGet(stale).statusCode(), "an expired download URL");
        assertEquals(403, barePut(stalePut, "late".getBytes(StandardCharsets.UTF_8)).statusCode(),
                "an expired upload URL");
        String fresh = (String) downloadUrl(s3Base, id).get("url");
        assertNotEquals(stale, fresh);
        HttpResponse<byte[]> recovered = bareGet(fresh);
        assertEquals(200, recovered.statusCode(), "recovery is a fresh download request (§5.9.5)");
        assertArrayEquals(bytes, recovered.body());
    }

    @Test
    void nativeBlobUrlsOnPostgresAreServedByTheServerWithNoCredentials() throws Exception {
        reset(pgBase);
        byte[] bytes = "native HMAC URLs, served here".getBytes(StandardCharsets.UTF_8);
        String id = BlobsItSupport.idOf(bytes);
        String put = grantUrl(pgBase, id, bytes.length);
        assertTrue(put.startsWith(It.base(PG_DEPLOYMENT) + "blobs/" + id + "?st="), put);
        HttpResponse<String> forged = barePut(put, "more bytes than the grant was given for"
                .getBytes(StandardCharsets.UTF_8));
        assertRefused(413, "blob.too_large", forged.statusCode(), forged.body(), "longer than the grant");
        byte[] sameLength = new byte[bytes.length];
        HttpResponse<String> mismatch = barePut(put, sameLength);
        assertRefused(400, "blob.hash_mismatch", mismatch.statusCode(), mismatch.body(),
                "the server checks the content address as the bytes stream");
        assertEquals(200, barePut(put, bytes).statusCode(), "the grant's URL needs no credentials");
        assertEquals(PushResult.Status.APPLIED, push(pgBase, "c1", "att1", bytes).status());

        Map<?, ?> link = downloadUrl(pgBase, id);
        String get = (String) link.get("url");
        assertTrue(get.startsWith(It.base(PG_DEPLOYMENT) + "blobs/" + id + "?st="), get);
        assertEquals(BigDecimal.valueOf((NOW_MS / 1000 + 900) * 1000), link.get("urlExpiresAtMs"),
                "the default 15 minutes, on the host's clock");
        HttpResponse<byte[]> fetched = bareGet(get);
        assertEquals(200, fetched.statusCode(), () -> new String(fetched.body(), StandardCharsets.UTF_8));
        assertArrayEquals(bytes, fetched.body());
        assertTrue(fetched.headers().firstValue("Cache-Control").orElse("").startsWith("public, max-age="),
                fetched.headers().map().toString());
        assertEquals("nosniff", fetched.headers().firstValue("X-Content-Type-Options").orElse(""));
        HttpResponse<byte[]> noToken = bareGet(It.base(PG_DEPLOYMENT) + "blobs/" + id);
        assertRefused(401, "sync.auth_required", noToken.statusCode(), new String(noToken.body(),
                StandardCharsets.UTF_8), "the same path without the token needs credentials");

        String token = get.substring(get.indexOf("?st=") + 4);
        String mac = token.substring(token.indexOf('.') + 1);
        char last = mac.charAt(mac.length() - 1);
        String tampered = get.substring(0, get.length() - 1) + (last == 'A' ? 'B' : 'A');
        HttpResponse<byte[]> t = bareGet(tampered);
        assertRefused(403, "blob.forbidden", t.statusCode(), new String(t.body(), StandardCharsets.UTF_8), "MAC");
        String otherId = BlobsItSupport.idOf("other".getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> elsewhere = bareGet(It.base(PG_DEPLOYMENT) + "blobs/" + otherId + "?st=" + token);
        assertRefused(403, "blob.forbidden", elsewhere.statusCode(), new String(elsewhere.body(),
                StandardCharsets.UTF_8), "another blob's path");
        HttpResponse<byte[]> uploadAsDownload = bareGet(put);
        assertRefused(403, "blob.forbidden", uploadAsDownload.statusCode(), new String(uploadAsDownload.body(),
                StandardCharsets.UTF_8), "an upload grant is no download");

        assertEquals(200, It.conformance(pgBase, "POST", "clock/advance", "{\"ms\":961000}").statusCode());
        HttpResponse<byte[]> expired = bareGet(get);
        String body = new String(expired.body(), StandardCharsets.UTF_8);
        assertRefused(403, "blob.forbidden", expired.statusCode(), body, "past exp and the 60 s skew");
        assertTrue(body.contains("expired"), body);
        HttpResponse<byte[]> recovered = bareGet((String) downloadUrl(pgBase, id).get("url"));
        assertEquals(200, recovered.statusCode(), "a fresh download request mints a fresh URL");
        assertArrayEquals(bytes, recovered.body());
    }
}

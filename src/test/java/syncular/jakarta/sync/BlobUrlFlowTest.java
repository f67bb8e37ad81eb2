package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static syncular.jakarta.storage.BlobStreams.idOf;
import static syncular.jakarta.sync.BlobTasksDatabase.SCHEMA;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.PostgresBlobStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.storage.s3.S3BlobStore;
import syncular.jakarta.storage.s3.S3ProxySupport;
import syncular.jakarta.wire.BlobRef;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.PushResult;

/**
 * §5.9.3 grants and §5.9.5 download URLs through the real upload, push and download logic: on PostgreSQL with native
 * HMAC URLs (this server is the URL host, so the bytes are checked as they stream in), and on S3 (S3Proxy) with the
 * store's SigV4 URLs, where a direct PUT is checked against its content address when a push first references it. A
 * URL is minted only after the grant's cap or the download's row-derived authorization, never instead of them.
 */
class BlobUrlFlowTest {
    private static final byte[] KEY = "a blob-url flow test key, 32+ bytes".getBytes(StandardCharsets.UTF_8);
    private static final String BASE = "https://sync.example/syncular/blobs";
    private static final long CAP = 1 << 20;
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static BlobTasksDatabase fixture;
    private static PostgresServerStorage storage;
    private static PostgresBlobStore pgBlobs;
    private final AtomicLong now = new AtomicLong(1_750_000_000_000L);
    private final SignedUrls signer = new SignedUrls(KEY, BASE, () -> SignedUrls.DEFAULT_TTL_MS);
    private String partition;

    @BeforeAll
    static void database() {
        fixture = BlobTasksDatabase.open();
        storage = fixture.storage;
        pgBlobs = fixture.blobs;
    }

    @AfterAll
    static void close() { fixture.close(); }

    @BeforeEach
    void fresh() { partition = EmbeddedPostgresSupport.partition("blob-url"); }

    private Identity actor(String name) { return new Identity(name, partition); }

    /** p1 for everyone but "outsider", who sees p2. */
    private static final ScopeResolver RESOLVER = identity -> Map.of("project_id",
            List.of(identity.actorId().equals("outsider") ? "p2" : "p1"));

    private BlobUpload upload(BlobStore store, BlobUrls urls) {
        return new BlobUpload(storage, store, now::get, CAP, urls, Optional.of(signer));
    }

    private BlobDownload download(BlobStore store, BlobUrls urls) {
        return new BlobDownload(storage, store, RESOLVER, now::get, SCHEMA, List::of, urls, Optional.of(signer));
    }

    private PushProcessor.Outcome push(BlobStore store, String commitId, String blobRef) {
        PushProcessor processor = new PushProcessor(storage, now::get, Validation.NONE, 1000, store);
        return BlobTasksDatabase.push(processor, actor("author"), Map.of("project_id", List.of("p1")), commitId,
                BlobTasksDatabase.upsert(commitId, null, blobRef));
    }

    private static String ref(byte[] bytes) throws Exception {
        return new BlobRef(idOf(bytes), bytes.length, null, null).toJson();
    }

    private static Map<?, ?> json(String text) { return (Map<?, ?>) Json.parse(text); }

    private static String token(String url) { return url.substring(url.indexOf("?st=") + 4); }

    private static ErrorCode refusal(org.junit.jupiter.api.function.Executable call) {
        return assertThrows(SyncException.class, call).code();
    }

    @Test
    void inlineGrantsAnswerNoneAndInlineDownloadsStream() throws Exception {
        byte[] bytes = "inline".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals("{}", upload(pgBlobs, BlobUrls.NONE).grant(actor("author"), id, (long) bytes.length));
        upload(pgBlobs, BlobUrls.NONE).upload(actor("author"), id, new ByteArrayInputStream(bytes), bytes.length, null);
        assertEquals(PushResult.Status.APPLIED, push(pgBlobs, "t1", ref(bytes)).result().status());
        BlobDownload.Inline inline = assertInstanceOf(BlobDownload.Inline.class,
                download(pgBlobs, BlobUrls.NONE).download(actor("reader"), id));
        assertEquals(bytes.length, inline.blob().byteLength());
    }

    @Test
    void aNativeGrantIsASignedPutWhoseBytesAreCheckedAsTheyStream() throws Exception {
        BlobUpload up = upload(pgBlobs, signer);
        byte[] bytes = "granted bytes".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        assertEquals(ErrorCode.BLOB_TOO_LARGE, refusal(() -> up.grant(actor("author"), id, CAP + 1)),
                "the cap comes before any URL");
        Map<?, ?> grant = json(up.grant(actor("author"), id, (long) bytes.length));
        String url = (String) grant.get("url");
        assertTrue(url.startsWith(BASE + "/" + id + "?st="), url);
        assertEquals(java.math.BigDecimal.valueOf((now.get() / 1000 + 900) * 1000), grant.get("urlExpiresAtMs"));
        String t = token(url);

        assertEquals(ErrorCode.BLOB_HASH_MISMATCH, refusal(() -> up.uploadSigned(id, t,
                new ByteArrayInputStream("forged bytes!".getBytes(StandardCharsets.UTF_8)), -1, null)));
        assertEquals(ErrorCode.BLOB_TOO_LARGE, refusal(() -> up.uploadSigned(id, t,
                new ByteArrayInputStream("granted bytes, and more".getBytes(StandardCharsets.UTF_8)), -1, null)),
                "no more than the granted length");
        assertTrue(pgBlobs.find(partition, id).isEmpty(), "nothing stored by a refused upload");
        String other = idOf("other".getBytes(StandardCharsets.UTF_8));
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> up.uploadSigned(other, t,
                new ByteArrayInputStream(bytes), bytes.length, null)), "the token names one blob");
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> up.uploadSigned(id, t.substring(1),
                new ByteArrayInputStream(bytes), bytes.length, null)), "tampered");

        assertEquals(BlobStore.PutOutcome.STORED, up.uploadSigned(id, t, new ByteArrayInputStream(bytes),
                bytes.length, "text/plain"));
        assertEquals("text/plain", pgBlobs.find(partition, id).orElseThrow().mediaType());
        assertEquals(Map.of("present", true), json(up.grant(actor("author"), id, (long) bytes.length)),
                "a present blob needs no PUT");

        now.addAndGet(961_000);   // 900 s TTL + 60 s skew, and past it
        String id2 = idOf("late".getBytes(StandardCharsets.UTF_8));
        String late = token((String) json(up.grant(actor("author"), id2, 4L)).get("url"));
        now.addAndGet(961_000);
        SyncException expired = assertThrows(SyncException.class, () -> up.uploadSigned(id2, late,
                new ByteArrayInputStream("late".getBytes(StandardCharsets.UTF_8)), 4, null));
        assertEquals(ErrorCode.BLOB_FORBIDDEN, expired.code());
        assertTrue(expired.getMessage().contains("expired"), expired.getMessage());
    }

    @Test
    void aNativeDownloadUrlIsMintedOnlyForAnActorTheRowsAuthorize() throws Exception {
        byte[] bytes = "attached".getBytes(StandardCharsets.UTF_8);
        String id = idOf(bytes);
        BlobDownload down = download(pgBlobs, signer);
        upload(pgBlobs, signer).upload(actor("author"), id, new ByteArrayInputStream(bytes), bytes.length, null);
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> down.download(actor("reader"), id)),
                "no referencing row yet: no URL either");
        assertEquals(PushResult.Status.APPLIED, push(pgBlobs, "t1", ref(bytes)).result().status());
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> down.download(actor("outsider"), id)));

        BlobDownload.Url url = assertInstanceOf(BlobDownload.Url.class, down.download(actor("reader"), id));
        assertTrue(url.issued().url().startsWith(BASE + "/" + id + "?st="), url.issued().url());
        BlobDownload.Signed signed = down.downloadSigned(id, token(url.issued().url()));
        assertEquals(partition, signed.blob().partition());
        assertEquals(bytes.length, signed.blob().byteLength());
        assertEquals(url.issued().urlExpiresAtMs() / 1000, signed.expSeconds());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(pgBlobs.writeTo(signed.blob().partition(), id, out));
        assertArrayEquals(bytes, out.toByteArray());

        String other = idOf("other".getBytes(StandardCharsets.UTF_8));
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> down.downloadSigned(other, token(url.issued().url()))));
        now.addAndGet(961_000);
        assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> down.downloadSigned(id, token(url.issued().url()))),
                "expired; recovery is a fresh download request");
        assertInstanceOf(BlobDownload.Url.class, down.download(actor("reader"), id), "which mints a fresh one");
        BlobDownload noSigner = new BlobDownload(storage, pgBlobs, RESOLVER, now::get, SCHEMA, List::of,
                BlobUrls.NONE, Optional.empty());
        assertEquals(ErrorCode.BLOB_NOT_FOUND, refusal(() -> noSigner.downloadSigned(id, "x.y")));
    }

    @Test
    void aPresignedS3PutCountsOnlyOnceItsBytesHashToTheReferencedId() throws Exception {
        try (S3BlobStore s3 = S3BlobStore.open(S3ProxySupport.settings(S3ProxySupport.endpoint(),
                S3ProxySupport.prefix("flow")))) {
            BlobUrls presigned = BlobUrls.presigned(s3, 600_000);
            BlobUpload up = upload(s3, presigned);
            byte[] honest = "honest direct bytes".getBytes(StandardCharsets.UTF_8);
            byte[] forged = "forged direct bytes".getBytes(StandardCharsets.UTF_8);
            String id = idOf(honest);

            String url = (String) json(up.grant(actor("author"), id, (long) forged.length)).get("url");
            assertEquals(200, put(url, forged));
            PushProcessor.Outcome poisoned = push(s3, "t-poisoned", ref(honest));
            assertEquals(PushResult.Status.REJECTED, poisoned.result().status());
            assertEquals(ErrorCode.BLOB_NOT_FOUND.wire(),
                    ((PushResult.OpError) poisoned.result().results().get(0)).code(),
                    "bytes that do not hash to the id are never referenced");

            String again = (String) json(up.grant(actor("author"), id, (long) honest.length)).get("url");
            assertEquals(200, put(again, honest));
            assertTrue(s3.find(partition, id).isEmpty(), "not a blob before its first reference");
            assertEquals(PushResult.Status.APPLIED, push(s3, "t-honest", ref(honest)).result().status());
            assertEquals(Map.of("present", true), json(up.grant(actor("author"), id, (long) honest.length)));

            BlobDownload.Url link = assertInstanceOf(BlobDownload.Url.class,
                    download(s3, presigned).download(actor("reader"), id));
            HttpResponse<byte[]> got = HTTP.send(HttpRequest.newBuilder(URI.create(link.issued().url())).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, got.statusCode());
            assertArrayEquals(honest, got.body());
            assertEquals(ErrorCode.BLOB_FORBIDDEN, refusal(() -> download(s3, presigned).download(actor("outsider"),
                    id)), "authorization before any URL, on S3 too");
        }
    }

    private static int put(String url, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}

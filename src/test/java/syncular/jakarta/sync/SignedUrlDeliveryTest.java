package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.PostgresSegmentStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.Subscription;

/**
 * SPEC §5.4 through the handler and the download on PostgreSQL: bit-3 gating of {@code url} on both lanes, and the
 * credential-free fetch with its refusals (another scope digest, another partition, an expired token, an expired
 * segment, an unknown segment, signed URLs off).
 */
class SignedUrlDeliveryTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final int ROWS = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    private static final int ROWS_URLS = ROWS | PullHeader.ACCEPT_SIGNED_URLS;
    private static final int ALL = ROWS_URLS | PullHeader.ACCEPT_SQLITE;
    private static final String BASE = "https://cdn.example/segments";
    private static final byte[] KEY = "delivery test key, 32 bytes long".getBytes(StandardCharsets.UTF_8);
    private static final ScopeResolver ALL_PROJECTS = identity -> Map.of("project_id", List.of("*"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private static PostgresSegmentStore segments;

    @TempDir
    static Path dir;

    private final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    private final Clock clock = now::get;
    private final SignedUrls signer = new SignedUrls(KEY, BASE, () -> 900_000);

    @BeforeAll
    static void database() {
        SegmentsDatabase d = SegmentsDatabase.open(SCHEMA);
        db = d.db();
        storage = d.storage();
        segments = d.segments();
    }

    @AfterAll
    static void close() { db.close(); }

    /** {@code segmentTtlMs}: the segments' own cache lifetime (§5.1), apart from the URLs' TTL. */
    private SyncHandler handler(Optional<SignedUrls> urls, long segmentTtlMs) {
        SqliteImageLane lane = new SqliteImageLane(segments, clock, segmentTtlMs, dir, 1,
                syncular.jakarta.events.ServerEvents.NONE);
        return new SyncHandler(storage, () -> SCHEMA, List::of, ALL_PROJECTS, clock,
                new SyncSettings(SyncSettings.DEFAULTS.maxOperationsPerRequest(), 1,
                        SyncSettings.DEFAULTS.maxResponseBytes(), segmentTtlMs,
                        SyncSettings.DEFAULTS.maxSubscriptionsPerRequest(), SyncSettings.DEFAULTS.admission(),
                        SyncSettings.DEFAULTS.maxCascadeOperationsPerCommit(),
                        SyncSettings.DEFAULTS.pageCacheBytes(), SyncSettings.DEFAULTS.recentCommitBytes()),
                new SegmentPublishing(segments, clock, segmentTtlMs, Optional.of(lane),
                        urls.map(SegmentUrls.class::cast), ServerEvents.NONE), Validation.NONE,
                Leases.OFF);
    }

    private SegmentDownload download(Optional<SignedUrls> urls) {
        return new SegmentDownload(storage, segments, ALL_PROJECTS, clock, SCHEMA, List::of, urls);
    }

    private static void seed(SyncHandler h, Identity actor, String project) {
        List<PushCommit.Operation> ops = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = project + "-t" + i;
            ops.add(PushCommit.Operation.upsert("tasks", id, null,
                    TestSchemas.taskPayload(SCHEMA, id, project, "title " + i, false)));
        }
        h.handle(actor, new RequestMessage(1, List.of(new ReqHeader("seeder", 1), new PushCommit("seed-" + project, ops))));
    }

    private static List<SegmentRef> refs(SyncHandler h, Identity actor, String client, String project, int accept) {
        List<RequestFrame> frames = List.of(new ReqHeader(client, 1), new PullHeader(0, 2, 50, accept),
                new Subscription("s", "tasks", Map.of("project_id", List.of(project)), null, -1, null));
        ResponseMessage m = h.handle(actor, new RequestMessage(1, frames)).response();
        List<SegmentRef> out = m.frames().stream().filter(f -> f instanceof SegmentRef).map(SegmentRef.class::cast)
                .toList();
        assertFalse(out.isEmpty(), () -> "the bootstrap travels by reference: " + m.frames());
        return out;
    }

    private static String token(SegmentRef ref) { return token(ref.url()); }

    private static String token(SignedUrls.Issued issued) { return token(issued.url()); }

    private static String token(String url) { return url.substring(url.indexOf("?st=") + 4); }

    private static ErrorCode refusal(SegmentDownload d, String segmentId, String token) {
        return assertThrows(SyncException.class, () -> d.downloadSigned(segmentId, token)).code();
    }

    @Test
    void onlyAClientWithBit3GetsUrlsOnEitherLaneAndOnlyWhenTheServerSigns() {
        Identity actor = new Identity("a", EmbeddedPostgresSupport.partition("gate"));
        SyncHandler h = handler(Optional.of(signer), 3_600_000);
        seed(h, actor, "p1");
        for (SegmentRef ref : refs(h, actor, "c-rows", "p1", ROWS_URLS)) {
            assertEquals(SegmentRef.MediaType.ROWS, ref.mediaType());
            assertTrue(ref.url().startsWith(BASE + "/" + ref.segmentId() + "?st="), ref.url());
            assertEquals((now.get() / 1000 + 900) * 1000, ref.urlExpiresAtMs());
        }
        List<SegmentRef> image = refs(h, actor, "c-image", "p1", ALL);
        assertEquals(List.of(SegmentRef.MediaType.SQLITE), image.stream().map(SegmentRef::mediaType).toList());
        assertTrue(image.get(0).url().startsWith(BASE + "/" + image.get(0).segmentId() + "?st="));
        for (SegmentRef ref : refs(h, actor, "c-plain", "p1", ROWS | PullHeader.ACCEPT_SQLITE)) {
            assertNull(ref.url(), "no bit 3, no url");
            assertNull(ref.urlExpiresAtMs());
        }
        for (SegmentRef ref : refs(handler(Optional.empty(), 3_600_000), actor, "c-off", "p1", ALL)) {
            assertNull(ref.url(), "signed URLs off: bit 3 changes nothing");
        }
    }

    @Test
    void aGenuineUrlFetchesTheContentAddressedBytesWithNoIdentity() {
        Identity actor = new Identity("a", EmbeddedPostgresSupport.partition("fetch"));
        SyncHandler h = handler(Optional.of(signer), 3_600_000);
        seed(h, actor, "p1");
        for (SegmentRef ref : refs(h, actor, "c", "p1", ALL)) {
            SegmentDownload.Signed got = download(Optional.of(signer)).downloadSigned(ref.segmentId(), token(ref));
            assertEquals(ref.segmentId(), SegmentStore.segmentId(got.bytes()));
            assertEquals(ref.urlExpiresAtMs() / 1000, got.expSeconds());
            assertArrayEquals(got.bytes(), download(Optional.empty()).download(actor, ref.segmentId(),
                    "{\"project_id\":[\"p1\"]}"), "the same bytes the direct endpoint serves");
        }
    }

    @Test
    void aGenuineTokenBoundToOtherScopesOrAnotherPartitionIsForbidden() {
        Identity actor = new Identity("a", EmbeddedPostgresSupport.partition("bind"));
        SyncHandler h = handler(Optional.of(signer), 3_600_000);
        seed(h, actor, "p1");
        SegmentRef ref = refs(h, actor, "c", "p1", ROWS_URLS).get(0);
        SegmentDownload d = download(Optional.of(signer));
        String otherScopes = token(signer.issue(ref.segmentId(), "another-digest", actor.partition(), now.get()));
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(d, ref.segmentId(), otherScopes));
        String otherPartition = token(signer.issue(ref.segmentId(), ref.scopeDigest(), actor.partition() + "-x",
                now.get()));
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(d, ref.segmentId(), otherPartition));
        SegmentRef other = refs(h, actor, "c2", "p1", ROWS_URLS).stream()
                .filter(r -> !r.segmentId().equals(ref.segmentId())).findFirst().orElseThrow();
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(d, other.segmentId(), token(ref)), "one page's token, another's path");
    }

    @Test
    void anExpiredTokenAndAnExpiredSegmentAreSegmentExpiredAnUnknownOneNotFound() {
        Identity actor = new Identity("a", EmbeddedPostgresSupport.partition("expiry"));
        SyncHandler h = handler(Optional.of(signer), 3_600_000);
        seed(h, actor, "p1");
        SegmentRef ref = refs(h, actor, "c", "p1", ROWS_URLS).get(0);
        SegmentDownload d = download(Optional.of(signer));
        now.set(ref.urlExpiresAtMs() + 60_999);
        d.downloadSigned(ref.segmentId(), token(ref));   // within the ≤ 60 s verify skew
        now.set(ref.urlExpiresAtMs() + 61_000);
        assertEquals(ErrorCode.SYNC_SEGMENT_EXPIRED, refusal(d, ref.segmentId(), token(ref)));

        Identity shortLived = new Identity("a", EmbeddedPostgresSupport.partition("short"));
        SyncHandler brief = handler(Optional.of(signer), 1_000);   // segments outlive 1 s less than their URLs
        seed(brief, shortLived, "p1");
        SegmentRef gone = refs(brief, shortLived, "c", "p1", ROWS_URLS).get(0);
        now.addAndGet(1_000);
        assertEquals(ErrorCode.SYNC_SEGMENT_EXPIRED, refusal(d, gone.segmentId(), token(gone)));

        String unknown = "sha256:" + "00".repeat(32);
        assertEquals(ErrorCode.SYNC_NOT_FOUND,
                refusal(d, unknown, token(signer.issue(unknown, "d", actor.partition(), now.get()))));
        assertEquals(ErrorCode.SYNC_NOT_FOUND, refusal(download(Optional.empty()), gone.segmentId(), token(gone)),
                "a server without signed URLs knows no such URL");
    }
}

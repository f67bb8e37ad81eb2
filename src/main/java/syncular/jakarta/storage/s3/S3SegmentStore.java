package syncular.jakarta.storage.s3;

import static syncular.jakarta.storage.s3.S3Clients.call;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import syncular.jakarta.storage.SegmentBytesCache;
import syncular.jakarta.storage.SegmentPresigner;
import syncular.jakarta.storage.SegmentStore;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.wire.Json;

/**
 * {@link SegmentStore} in an S3-compatible bucket, in the seeds' key layout (seeds/002 README, UPSTREAM-SERVER §3.12).
 * Every look-up is a GET or HEAD of a key computed from what is looked up; only the sweep lists. Under the configured
 * prefix {@code P}:
 * <ul>
 *   <li>{@code P seg/sha256/<hex>}: the segment's bytes, verbatim and immutable (the object body is exactly the
 *       content-addressed bytes, so a presigned GET serves them and the client's §5.1 hash check passes).</li>
 *   <li>{@code P rec/sha256/<hex>.json}: the mutable record, {@code {"segmentId", "scopeDigests", "publications"}}:
 *       one publication per context (partition, log epoch, table, schema version, media type, scope digest, pin,
 *       cursors), oldest first, each with its own lifetime; {@code scopeDigests} is the compatibility view (their
 *       distinct digests, first published first).</li>
 *   <li>{@code P find/<sha256 of the context>.json}: the reuse pointer {@code {"segmentId"}} of the context (up to
 *       where its page starts) last published; {@link #find} reads it, then the record, selects the newest live
 *       publication of that context and start, and HEADs the bytes (a bucket lifecycle rule may have removed
 *       them).</li>
 * </ul>
 *
 * <p>A record changes by read, modify and conditional write: {@code If-Match} the ETag read, or
 * {@code If-None-Match: *} to create, again from the read on 412/409, so two nodes publishing the same segment at once
 * both land, on a server that honors conditional writes (AWS S3, R2, MinIO do). A server that ignores them (S3Proxy
 * 2.6 does) gives last-writer-wins between nodes: a lost publication makes its descriptor's download fail, and the
 * client's next pull publishes it again (§5.4, §5.5 recovery). Within one node a lock per segment serializes the
 * writers, whatever the server. Publishing writes the record first and the bytes after it (a HEAD, then a PUT only if
 * they are absent), so a publication never outlives the bytes it names but for one race: a sweep that removes a
 * segment's last (expired) publication deletes its record and then its bytes, and a publish of the same content landing
 * between the two keeps a record whose bytes are gone until it is published again. A segment id is checked against its
 * bytes before anything is written, so the bytes under a key always hash to it.
 *
 * <p>Expiry is the record's, never S3's: a bucket lifecycle rule on the prefix is garbage collection only, and must
 * be set well above the segment TTL (or clients meet {@code sync.not_found} where they should have had the
 * retryable {@code sync.segment_expired}). Thread-safe.
 */
public final class S3SegmentStore implements SegmentStore, SegmentPresigner, AutoCloseable {
    /** Rounds of read-modify-write a contended record gets before the publish fails as an infrastructure error. */
    static final int RECORD_ATTEMPTS = 16;
    private static final String SEG = "seg/sha256/";
    private static final String REC = "rec/sha256/";
    private static final String FIND = "find/";

    private final S3Client s3;
    private final S3Presigner presigner;
    private final S3Settings settings;
    private final String bucket;
    private final String root;
    private final SegmentBytesCache<String, byte[]> recent;
    /** Per-segment locks of this node, by hash: a collision only makes two segments' writers wait on each other. */
    private final Object[] stripes = new Object[64];

    private S3SegmentStore(S3Client s3, S3Presigner presigner, S3Settings settings, long cacheBytes) {
        this.s3 = s3;
        this.presigner = presigner;
        this.settings = settings;
        this.bucket = settings.bucket();
        this.root = settings.root();
        this.recent = SegmentBytesCache.byContentAddress(cacheBytes);
        Arrays.setAll(stripes, i -> new Object());
    }

    /**
     * A client and a presigner for {@code settings}, and the store over them; {@code cacheBytes}: how many bytes of
     * recently stored or read segments this node keeps in memory for {@link #bytes} (0: none).
     */
    public static S3SegmentStore open(S3Settings settings, long cacheBytes) {
        return new S3SegmentStore(S3Clients.client(settings), S3Clients.presigner(settings), settings, cacheBytes);
    }

    /** What the store was opened with. */
    public S3Settings settings() { return settings; }

    /** Releases the client's connections; the store is unusable afterwards. */
    @Override
    public void close() {
        presigner.close();
        s3.close();
    }

    @Override
    public Publication publish(Publication p, byte[] bytes) {
        if (!p.segmentId().equals(SegmentStore.segmentId(bytes))) {
            throw new IllegalArgumentException("a segment id must be the SHA-256 of its bytes");
        }
        synchronized (stripe(p.segmentId())) {
            update(p.segmentId(), publications -> {
                List<Publication> next = new ArrayList<>(publications);
                for (int i = 0; i < next.size(); i++) {
                    Publication old = next.get(i);
                    if (old.key().equals(p.key())) {   // an equal context only extends its own lifetime
                        if (p.expiresAtMs() <= old.expiresAtMs()) return publications;
                        next.set(i, new Publication(old.segmentId(), old.key(), old.byteLength(), old.rowCount(),
                                old.createdAtMs(), p.expiresAtMs()));
                        return next;
                    }
                }
                next.add(p);
                return next;
            });
            if (!exists(segmentKey(p.segmentId()))) {
                call(() -> s3.putObject(b -> b.bucket(bucket).key(segmentKey(p.segmentId()))
                        .contentType("application/octet-stream"), RequestBody.fromBytes(bytes)));
            }
        }
        call(() -> s3.putObject(b -> b.bucket(bucket).key(pointerKey(p.key())).contentType("application/json"),
                RequestBody.fromString(Json.write(Map.of("segmentId", p.segmentId())), StandardCharsets.UTF_8)));
        recent.remember(p.segmentId(), bytes);
        return p;
    }

    @Override
    public Optional<Publication> find(Key key, long nowMs) {
        Optional<String> pointed = pointedSegment(pointerKey(key));
        if (pointed.isEmpty()) return Optional.empty();
        String segmentId = pointed.get();
        Optional<Publication> live = newestFirst(read(segmentId).publications()).stream()
                .filter(p -> p.key().sameStart(key) && p.liveAt(nowMs)).findFirst();
        return live.isPresent() && exists(segmentKey(segmentId)) ? live : Optional.empty();
    }

    @Override
    public List<Publication> publications(String segmentId, String partition, String logEpoch) {
        return publications(segmentId).stream()
                .filter(p -> p.key().partition().equals(partition) && p.key().logEpoch().equals(logEpoch)).toList();
    }

    @Override
    public List<Publication> publications(String segmentId) {
        if (!SegmentStore.isSegmentId(segmentId)) return List.of();
        return newestFirst(read(segmentId).publications());
    }

    /** The stored bytes; the array may be shared with other callers and must not be modified. */
    @Override
    public Optional<byte[]> bytes(String segmentId) {
        if (!SegmentStore.isSegmentId(segmentId)) return Optional.empty();
        Optional<byte[]> hit = recent.get(segmentId);
        if (hit.isPresent()) return hit;
        Optional<byte[]> read = getBytes(segmentKey(segmentId)).map(ResponseBytes::asByteArray);
        read.ifPresent(b -> recent.remember(segmentId, b));
        return read;
    }

    /**
     * Lists the records (the one listing this store makes) and drops each one's expired publications; a segment left
     * with none loses its record, its reuse pointers (those still naming it) and its bytes.
     */
    @Override
    public int sweepExpired(long nowMs) {
        String prefix = root + REC;
        int swept = 0;
        String token = null;
        do {
            String page = token;
            ListObjectsV2Response listing = call(() -> s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix)
                    .continuationToken(page)));
            for (S3Object o : listing.contents()) {
                String name = o.key().substring(prefix.length());
                if (!name.endsWith(".json")) continue;
                String segmentId = "sha256:" + name.substring(0, name.length() - ".json".length());
                if (SegmentStore.isSegmentId(segmentId) && sweep(segmentId, nowMs)) swept++;
            }
            token = listing.isTruncated() ? listing.nextContinuationToken() : null;
        } while (token != null);
        if (swept > 0) recent.forgetAll();
        return swept;
    }

    /** Whether the segment went. */
    private boolean sweep(String segmentId, long nowMs) {
        synchronized (stripe(segmentId)) {
            List<Publication> expired = new ArrayList<>();
            List<Publication> left = update(segmentId, publications -> {
                expired.clear();
                publications.stream().filter(p -> !p.liveAt(nowMs)).forEach(expired::add);
                return expired.isEmpty() ? publications
                        : publications.stream().filter(p -> p.liveAt(nowMs)).toList();
            });
            for (Publication p : expired) {
                String pointer = pointerKey(p.key());
                if (pointedSegment(pointer).filter(segmentId::equals).isPresent()) delete(pointer);
            }
            if (!left.isEmpty()) return false;
            delete(recordKey(segmentId));
            delete(segmentKey(segmentId));
            return true;
        }
    }

    /**
     * SPEC §5.4 delegated presign: a SigV4 query-signed GET of {@code seg/sha256/<hex>}, for the same endpoint and
     * addressing style the store uses, signed with the provider's clock (the SDK's), which is also the clock that
     * enforces it.
     */
    @Override
    public Presigned presignGet(String segmentId, long ttlMs) {
        if (!SegmentStore.isSegmentId(segmentId)) throw new IllegalArgumentException("not a segment id (§5.1)");
        if (ttlMs < 1000 || ttlMs % 1000 != 0) throw new IllegalArgumentException("a presign TTL is whole seconds");
        PresignedGetObjectRequest signed = call(() -> presigner.presignGetObject(r -> r
                .signatureDuration(Duration.ofMillis(ttlMs))
                .getObjectRequest(g -> g.bucket(bucket).key(segmentKey(segmentId)))));
        // X-Amz-Date has whole seconds and the provider counts X-Amz-Expires from it, while the SDK reports the
        // signing instant's milliseconds too: the truncated instant is the one the provider enforces
        return new Presigned(signed.url().toString(),
                signed.expiration().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toEpochMilli());
    }

    // ------------------------------------------------------------------ the record

    /** A record as read: its publications (oldest first) and the ETag a conditional write must match. */
    private record Record(List<Publication> publications, String etag) { }

    private Record read(String segmentId) {
        Optional<Stored> stored = get(recordKey(segmentId));
        if (stored.isEmpty()) return new Record(List.of(), null);
        return new Record(parse(segmentId, stored.get().text()), stored.get().etag());
    }

    /**
     * Applies {@code change} to the record by conditional write until one lands; returns the publications written
     * (or read, when {@code change} returned its argument, which writes nothing).
     */
    private List<Publication> update(String segmentId, UnaryOperator<List<Publication>> change) {
        for (int attempt = 0; attempt < RECORD_ATTEMPTS; attempt++) {
            Record current = read(segmentId);
            List<Publication> next = change.apply(current.publications());
            if (next == current.publications()) return next;
            String body = render(segmentId, next);
            try {
                s3.putObject(b -> {
                    b.bucket(bucket).key(recordKey(segmentId)).contentType("application/json");
                    if (current.etag() == null) b.ifNoneMatch("*"); else b.ifMatch(current.etag());
                }, RequestBody.fromString(body, StandardCharsets.UTF_8));
                return next;
            } catch (S3Exception e) {
                // 412: another writer changed (or created) the record since the read; 409: a concurrent
                // conditional write is in progress. Either way: read again and re-apply.
                if (e.statusCode() != 412 && e.statusCode() != 409) {
                    throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
                }
            } catch (SdkException e) {
                throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
            }
        }
        throw new StorageException(StorageErrorCode.UNCLASSIFIED, Map.of("reason",
                "segment record contended: " + RECORD_ATTEMPTS + " conditional writes lost in a row"));
    }

    private static String render(String segmentId, List<Publication> publications) {
        List<Object> out = new ArrayList<>();
        LinkedHashSet<String> digests = new LinkedHashSet<>();
        for (Publication p : publications) {
            Key k = p.key();
            digests.add(k.scopeDigest());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("partition", k.partition());
            m.put("logEpoch", k.logEpoch());
            m.put("table", k.table());
            m.put("schemaVersion", k.schemaVersion());
            m.put("mediaType", mediaTypeName(k.mediaType()));
            m.put("scopeDigest", k.scopeDigest());
            m.put("asOfCommitSeq", k.asOfCommitSeq());
            m.put("rowCursor", k.rowCursor());
            m.put("nextRowCursor", k.nextRowCursor());
            m.put("byteLength", p.byteLength());
            m.put("rowCount", p.rowCount());
            m.put("createdAtMs", p.createdAtMs());
            m.put("expiresAtMs", p.expiresAtMs());
            out.add(m);
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("segmentId", segmentId);
        record.put("scopeDigests", List.copyOf(digests));
        record.put("publications", out);
        return Json.write(record);
    }

    private static List<Publication> parse(String segmentId, String json) {
        try {
            if (!(Json.parse(json) instanceof Map<?, ?> record) || !segmentId.equals(record.get("segmentId"))
                    || !(record.get("publications") instanceof List<?> list)) {
                throw unreadable();
            }
            List<Publication> out = new ArrayList<>();
            for (Object item : list) {
                if (!(item instanceof Map<?, ?> m)) throw unreadable();
                Key key = new Key(text(m, "partition"), text(m, "logEpoch"), text(m, "table"),
                        (int) number(m, "schemaVersion"), mediaTypeCode(m.get("mediaType")), text(m, "scopeDigest"),
                        number(m, "asOfCommitSeq"), cursor(m, "rowCursor"), cursor(m, "nextRowCursor"));
                out.add(new Publication(segmentId, key, number(m, "byteLength"), number(m, "rowCount"),
                        number(m, "createdAtMs"), number(m, "expiresAtMs")));
            }
            return out;
        } catch (Json.JsonException | ArithmeticException e) {
            throw unreadable();
        }
    }

    private static String text(Map<?, ?> m, String field) {
        if (!(m.get(field) instanceof String s)) throw unreadable();
        return s;
    }

    private static String cursor(Map<?, ?> m, String field) {
        Object v = m.get(field);
        if (v != null && !(v instanceof String)) throw unreadable();
        return (String) v;
    }

    private static long number(Map<?, ?> m, String field) {
        if (!(m.get(field) instanceof BigDecimal d)) throw unreadable();
        return d.longValueExact();
    }

    /** The record's media type is the reference's word for it (§5.4: 1 rows, 2 sqlite). */
    private static String mediaTypeName(int code) {
        return switch (code) {
            case 1 -> "rows";
            case 2 -> "sqlite";
            default -> throw new IllegalArgumentException("a segment media type is 1 (rows) or 2 (sqlite)");
        };
    }

    private static int mediaTypeCode(Object name) {
        if ("rows".equals(name)) return 1;
        if ("sqlite".equals(name)) return 2;
        throw unreadable();
    }

    private static StorageException unreadable() {
        return new StorageException(StorageErrorCode.UNCLASSIFIED, Map.of("reason", "segment record unreadable"));
    }

    /** Newest first, as the PostgreSQL store orders them; publications created at once keep their record order. */
    private static List<Publication> newestFirst(List<Publication> oldestFirst) {
        List<Publication> out = new ArrayList<>(oldestFirst);
        java.util.Collections.reverse(out);
        out.sort(Comparator.comparingLong(Publication::createdAtMs).reversed());
        return out;
    }

    /** The segment a reuse pointer names; empty when absent or not a pointer this store wrote (a miss). */
    private Optional<String> pointedSegment(String pointerKey) {
        Optional<Stored> pointer = get(pointerKey);
        if (pointer.isEmpty()) return Optional.empty();
        try {
            return Json.parse(pointer.get().text()) instanceof Map<?, ?> m && m.get("segmentId") instanceof String s
                    && SegmentStore.isSegmentId(s) ? Optional.of(s) : Optional.empty();
        } catch (Json.JsonException e) {
            return Optional.empty();
        }
    }

    // ------------------------------------------------------------------ keys

    String segmentKey(String segmentId) { return root + SEG + hex(segmentId); }

    String recordKey(String segmentId) { return root + REC + hex(segmentId) + ".json"; }

    /**
     * The context up to where its page starts, as a canonical JSON array, hashed: a fixed-length key whatever the
     * cursor holds. The array keeps a null in the place of the next row cursor, which {@link #find} ignores, so an
     * image's pointer (both cursors null) is where it was before pages were found by their start.
     */
    String pointerKey(Key k) {
        List<Object> context = Arrays.asList(k.partition(), k.logEpoch(), k.table(), k.schemaVersion(), k.mediaType(),
                k.scopeDigest(), k.asOfCommitSeq(), k.rowCursor(), null);
        return root + FIND + HexFormat.of().formatHex(sha256(Json.write(context).getBytes(StandardCharsets.UTF_8)))
                + ".json";
    }

    private static String hex(String segmentId) { return segmentId.substring("sha256:".length()); }

    private Object stripe(String segmentId) { return stripes[Math.floorMod(segmentId.hashCode(), stripes.length)]; }

    // ------------------------------------------------------------------ plumbing

    private record Stored(String text, String etag) { }

    private Optional<Stored> get(String key) {
        return getBytes(key).map(r -> new Stored(r.asUtf8String(), r.response().eTag()));
    }

    private Optional<ResponseBytes<GetObjectResponse>> getBytes(String key) {
        try {
            return Optional.of(s3.getObjectAsBytes(b -> b.bucket(bucket).key(key)));
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (S3Exception e) {
            if (e.statusCode() == 404) return Optional.empty();
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        } catch (SdkException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }

    private boolean exists(String key) {
        try {
            s3.headObject(b -> b.bucket(bucket).key(key));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) return false;
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        } catch (SdkException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
    }

    private void delete(String key) { call(() -> s3.deleteObject(b -> b.bucket(bucket).key(key))); }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }
}

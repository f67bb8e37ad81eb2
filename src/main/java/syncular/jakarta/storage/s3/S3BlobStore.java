package syncular.jakarta.storage.s3;

import static syncular.jakarta.storage.s3.S3Clients.call;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;
import syncular.jakarta.storage.BlobPresigner;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;

/**
 * {@link BlobStore} in an S3-compatible bucket (SPEC §5.9.2). Keys under the configured prefix {@code P}:
 * <ul>
 *   <li>{@code P blobs/<partition>/<blobId>}: the blob, content addressed and per partition; user metadata
 *       {@code uploaded-at-ms} (the latest (re-)upload, the store's clock, not S3's) and {@code media-type}.</li>
 *   <li>{@code P uploaded/<uploadedAtMs, 19 digits>/<partition>/<blobId>}: an empty entry per blob, so that a
 *       plain lexicographic listing is the sweep's oldest-first order; an entry whose blob is gone or was
 *       re-uploaded since is stale, and the listing deletes it.</li>
 *   <li>{@code P uploads/<startedAtMs, 19 digits>/<uuid>}: an upload in progress (an object or a multipart
 *       upload); never a blob, and removed by {@link #purgeIncompleteUploads} if its process died.</li>
 *   <li>{@code P direct/<partition>/<blobId>}: bytes a client PUT straight to the bucket under a presigned URL
 *       ({@link #presignPut}, §5.9.3). S3 does not hash them for us, so they are not a blob until
 *       {@link #adoptDirectUploads} has streamed them through SHA-256 at their first reference and copied them to
 *       the blob key; bytes that fail are deleted, and ones never referenced go with the purge.</li>
 * </ul>
 * {@code <partition>} is URL-encoded (and {@code .}/{@code *} too), so a partition id can never add a path level or
 * be a {@code .}/{@code ..} segment; the empty partition is {@code %}, which encoding never yields.
 *
 * <p>An upload streams to its {@code uploads/} key ({@value #PART_BYTES}-byte parts of a multipart upload, or one
 * PUT when the body fits one part), hashing and counting as it reads; only when every byte has arrived, within the
 * cap, and hashes to the blobId is it copied (server side) to the blob key, then the temporary key goes. A mismatch,
 * an oversized or a broken body aborts: nothing ever appears under {@code blobs/}. One part buffer is the whole of an
 * upload's heap; a download streams the GET body through a small buffer.
 *
 * <p>Unlike the PostgreSQL store, S3 has no transactions, so three steps are check-then-act, left on purpose: two
 * concurrent first uploads of a blob may both copy (the same bytes; the later media type wins); a sweep's
 * {@link #delete} re-reads the upload time and then deletes, so a re-upload landing between the two is lost (its
 * push then fails with {@code blob.not_found} and the client uploads again); and the sweep index entry is written
 * before the copy, so a crash leaves a stale entry rather than an unswept blob. Server-side copy caps a blob at
 * 5 GiB, far above {@code syncular.blobs.max-bytes}' sensible range.
 */
public final class S3BlobStore implements BlobStore, BlobPresigner, AutoCloseable {
    /** S3's smallest multipart part (but the last): the one buffer an upload holds. */
    static final int PART_BYTES = 5 * 1024 * 1024;
    private static final int COPY_BUFFER = 64 * 1024;
    private static final String UPLOADED_AT = "uploaded-at-ms";
    private static final String MEDIA_TYPE = "media-type";

    private final S3Client s3;
    private final S3Presigner presigner;
    private final S3Settings settings;
    private final String bucket;
    private final String root;

    private S3BlobStore(S3Client s3, S3Presigner presigner, S3Settings settings) {
        this.s3 = s3;
        this.presigner = presigner;
        this.settings = settings;
        this.bucket = settings.bucket();
        this.root = settings.root();
    }

    /** What the store was opened with. */
    public S3Settings settings() { return settings; }

    /** A client for {@code settings} on the JDK's HTTP transport, and the store over it. */
    public static S3BlobStore open(S3Settings settings) {
        // the presigner signs locally (no connection); same credentials, region, endpoint and addressing as the client
        return new S3BlobStore(S3Clients.client(settings), S3Clients.presigner(settings), settings);
    }

    /** Releases the client's connections; the store is unusable afterwards. */
    @Override
    public void close() {
        presigner.close();
        s3.close();
    }

    /** §5.9.5 delegated presign: a SigV4 GET of the blob key; S3 enforces the expiry on its clock, with no skew. */
    @Override
    public Presigned presignGet(String partition, String blobId, long ttlMs) {
        if (!BlobStore.isBlobId(blobId)) throw new IllegalArgumentException("not a blobId (SPEC §5.9.1)");
        PresignedGetObjectRequest p = call(() -> presigner.presignGetObject(r -> r
                .signatureDuration(Duration.ofMillis(ttlMs))
                .getObjectRequest(g -> g.bucket(bucket).key(blobKey(partition, blobId)))));
        return new Presigned(p.url().toString(), p.expiration().toEpochMilli());
    }

    /**
     * §5.9.3 presigned upload: a SigV4 PUT of the direct key with {@code Content-Length} signed, so S3 takes exactly
     * the granted size (which the grant checked against the cap) or nothing. No content type is signed: the client
     * sends its own, and it becomes the blob's media type on adoption.
     */
    @Override
    public Presigned presignPut(String partition, String blobId, long byteLength, long ttlMs) {
        if (!BlobStore.isBlobId(blobId)) throw new IllegalArgumentException("not a blobId (SPEC §5.9.1)");
        PresignedPutObjectRequest p = call(() -> presigner.presignPutObject(r -> r
                .signatureDuration(Duration.ofMillis(ttlMs))
                .putObjectRequest(o -> o.bucket(bucket).key(directKey(partition, blobId)).contentLength(byteLength))));
        return new Presigned(p.url().toString(), p.expiration().toEpochMilli());
    }

    /**
     * Streams each arrived direct upload through SHA-256 (a {@value #COPY_BUFFER}-byte buffer, never the whole
     * object) and copies the ones that hash to their id to the blob key, as {@link #put} does after its own check;
     * every checked direct object is deleted, passed or not. Its size needs no second check: S3 took exactly the
     * signed {@code Content-Length}, which the grant capped. Check-then-act like the rest of this store: a second
     * PUT landing between the read and the delete is lost, and its client's push fails with {@code blob.not_found}
     * until it uploads again.
     */
    @Override
    public Set<String> adoptDirectUploads(String partition, Collection<String> blobIds, long nowMs)
            throws IOException {
        Set<String> adopted = new HashSet<>();
        for (String blobId : new LinkedHashSet<>(blobIds)) {
            if (!BlobStore.isBlobId(blobId)) continue;
            String key = directKey(partition, blobId);
            ResponseInputStream<GetObjectResponse> in;
            try {
                in = s3.getObject(b -> b.bucket(bucket).key(key));
            } catch (NoSuchKeyException e) {
                continue;
            } catch (S3Exception e) {
                if (e.statusCode() == 404) continue;
                throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
            } catch (SdkException e) {
                throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
            }
            MessageDigest sha = sha256();
            String contentType;
            try (in) {
                contentType = in.response().contentType();
                byte[] buf = new byte[COPY_BUFFER];
                for (int n; (n = in.read(buf)) >= 0; ) sha.update(buf, 0, n);
            }
            if (blobId.equals(idOf(sha))) {
                Optional<BlobInfo> raced = find(partition, blobId);
                if (raced.isPresent()) {
                    touch(raced.get(), nowMs);
                } else {
                    // S3's default for a PUT without a type says nothing about the bytes: no media type then
                    String mediaType = contentType == null || contentType.equals("binary/octet-stream") ? null
                            : contentType;
                    emptyObject(indexKey(nowMs, partition, blobId));
                    call(() -> s3.copyObject(b -> b.sourceBucket(bucket).sourceKey(key).destinationBucket(bucket)
                            .destinationKey(blobKey(partition, blobId)).metadataDirective(MetadataDirective.REPLACE)
                            .contentType(mediaType == null ? "application/octet-stream" : mediaType)
                            .metadata(metadata(nowMs, mediaType))));
                }
                adopted.add(blobId);
            }
            deleteKey(key);
        }
        return adopted;
    }

    @Override
    public PutOutcome put(String partition, String blobId, InputStream body, long maxBytes, String mediaType,
                          long nowMs) throws IOException {
        if (!BlobStore.isBlobId(blobId)) throw new IllegalArgumentException("not a blobId (SPEC §5.9.1)");
        Optional<BlobInfo> existing = find(partition, blobId);
        if (existing.isPresent()) {
            PutOutcome checked = drain(blobId, body, maxBytes);
            if (checked != PutOutcome.STORED) return checked;
            touch(existing.get(), nowMs);
            return PutOutcome.ALREADY_PRESENT;
        }
        String temp = root + "uploads/" + time(nowMs) + "/" + UUID.randomUUID();
        String multipart = null;
        boolean completed = false;
        boolean written = false;
        try {
            MessageDigest sha = sha256();
            byte[] part = new byte[PART_BYTES];
            List<CompletedPart> parts = new ArrayList<>();
            long total = 0;
            int last;
            while (true) {
                int n = body.readNBytes(part, 0, PART_BYTES);
                total += n;
                if (total > maxBytes) return PutOutcome.TOO_LARGE;
                sha.update(part, 0, n);
                if (n < PART_BYTES) {
                    last = n;
                    break;
                }
                if (multipart == null) {
                    multipart = call(() -> s3.createMultipartUpload(b -> b.bucket(bucket).key(temp))).uploadId();
                }
                parts.add(uploadPart(temp, multipart, parts.size() + 1, part, n));
            }
            if (!blobId.equals(idOf(sha))) return PutOutcome.HASH_MISMATCH;
            if (multipart == null) {
                int length = last;
                call(() -> s3.putObject(b -> b.bucket(bucket).key(temp),
                        RequestBody.fromInputStream(new ByteArrayInputStream(part, 0, length), length)));
            } else {
                if (last > 0) parts.add(uploadPart(temp, multipart, parts.size() + 1, part, last));
                String id = multipart;
                call(() -> s3.completeMultipartUpload(b -> b.bucket(bucket).key(temp).uploadId(id)
                        .multipartUpload(m -> m.parts(parts))));
            }
            completed = true;
            written = true;
            // a concurrent upload of the same blob that finished first: it is the blob, this one only renews it
            Optional<BlobInfo> raced = find(partition, blobId);
            if (raced.isPresent()) {
                touch(raced.get(), nowMs);
                return PutOutcome.ALREADY_PRESENT;
            }
            emptyObject(indexKey(nowMs, partition, blobId));
            call(() -> s3.copyObject(b -> b.sourceBucket(bucket).sourceKey(temp).destinationBucket(bucket)
                    .destinationKey(blobKey(partition, blobId)).metadataDirective(MetadataDirective.REPLACE)
                    .contentType(mediaType == null ? "application/octet-stream" : mediaType)
                    .metadata(metadata(nowMs, mediaType))));
            return PutOutcome.STORED;
        } finally {
            cleanUp(temp, completed ? null : multipart, written);
        }
    }

    private CompletedPart uploadPart(String key, String uploadId, int number, byte[] buf, int length) {
        String etag = call(() -> s3.uploadPart(b -> b.bucket(bucket).key(key).uploadId(uploadId).partNumber(number)
                .contentLength((long) length), RequestBody.fromInputStream(new ByteArrayInputStream(buf, 0, length),
                length))).eTag();
        return CompletedPart.builder().partNumber(number).eTag(etag).build();
    }

    /** Best effort: what is left here (a failing S3) is the purge's to remove. */
    private void cleanUp(String temp, String openMultipart, boolean written) {
        try {
            if (openMultipart != null) {
                s3.abortMultipartUpload(b -> b.bucket(bucket).key(temp).uploadId(openMultipart));
            }
            if (written) s3.deleteObject(b -> b.bucket(bucket).key(temp));
        } catch (SdkException ignored) {
            // the purge of incomplete uploads finds it by its uploads/ key
        }
    }

    /** Moves the blob's upload time forward to {@code nowMs} (never back): new index entry, metadata, old entry. */
    private void touch(BlobInfo info, long nowMs) {
        if (nowMs <= info.uploadedAtMs()) return;
        String key = blobKey(info.partition(), info.blobId());
        emptyObject(indexKey(nowMs, info.partition(), info.blobId()));
        call(() -> s3.copyObject(b -> b.sourceBucket(bucket).sourceKey(key).destinationBucket(bucket)
                .destinationKey(key).metadataDirective(MetadataDirective.REPLACE)
                .contentType(info.mediaType() == null ? "application/octet-stream" : info.mediaType())
                .metadata(metadata(nowMs, info.mediaType()))));
        deleteKey(indexKey(info.uploadedAtMs(), info.partition(), info.blobId()));
    }

    private static Map<String, String> metadata(long uploadedAtMs, String mediaType) {
        return mediaType == null ? Map.of(UPLOADED_AT, Long.toString(uploadedAtMs))
                : Map.of(UPLOADED_AT, Long.toString(uploadedAtMs), MEDIA_TYPE, mediaType);
    }

    /** Reads an upload of a present blob to its end, only to check it; STORED means "the bytes are the blob's". */
    private static PutOutcome drain(String blobId, InputStream body, long maxBytes) throws IOException {
        MessageDigest sha = sha256();
        byte[] buf = new byte[COPY_BUFFER];
        long total = 0;
        for (int n; (n = body.read(buf)) >= 0; ) {
            total += n;
            if (total > maxBytes) return PutOutcome.TOO_LARGE;
            sha.update(buf, 0, n);
        }
        return blobId.equals(idOf(sha)) ? PutOutcome.STORED : PutOutcome.HASH_MISMATCH;
    }

    @Override
    public Optional<BlobInfo> find(String partition, String blobId) {
        HeadObjectResponse head;
        try {
            head = s3.headObject(b -> b.bucket(bucket).key(blobKey(partition, blobId)));
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (S3Exception e) {
            if (e.statusCode() == 404) return Optional.empty();
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        } catch (SdkException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
        String at = head.metadata().get(UPLOADED_AT);
        long uploadedAt = at != null ? Long.parseLong(at) : head.lastModified().toEpochMilli();
        return Optional.of(new BlobInfo(partition, blobId, head.contentLength(), head.metadata().get(MEDIA_TYPE),
                uploadedAt));
    }

    @Override
    public boolean writeTo(String partition, String blobId, OutputStream out) throws IOException {
        ResponseInputStream<GetObjectResponse> in;
        try {
            in = s3.getObject(b -> b.bucket(bucket).key(blobKey(partition, blobId)));
        } catch (NoSuchKeyException e) {
            return false;
        } catch (SdkException e) {
            throw new StorageException(StorageErrorCode.UNCLASSIFIED, e);
        }
        long expected = in.response().contentLength();
        long written = 0;
        try (in) {
            byte[] buf = new byte[COPY_BUFFER];
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
                written += n;
            }
        }
        if (written != expected) throw new IOException("the blob was removed while it was being sent");
        return true;
    }

    /** One HEAD per distinct id: S3 has no multi-key look-up, and a push references few blobs. */
    @Override
    public Set<String> present(String partition, Collection<String> blobIds) {
        Set<String> out = new HashSet<>();
        for (String id : new LinkedHashSet<>(blobIds)) {
            if (BlobStore.isBlobId(id) && find(partition, id).isPresent()) out.add(id);
        }
        return out;
    }

    @Override
    public List<BlobInfo> uploadedBefore(long cutoffMs, BlobInfo after, int limit) {
        String prefix = root + "uploaded/";
        String startAfter = after == null ? null : indexKey(after.uploadedAtMs(), after.partition(), after.blobId());
        List<BlobInfo> out = new ArrayList<>();
        String token = null;
        do {
            String page = token;
            ListObjectsV2Response listing = call(() -> s3.listObjectsV2(ListObjectsV2Request.builder().bucket(bucket)
                    .prefix(prefix).startAfter(page == null ? startAfter : null).continuationToken(page).build()));
            for (S3Object o : listing.contents()) {
                String[] parts = o.key().substring(prefix.length()).split("/", -1);
                if (parts.length != 3) continue;   // not an entry this store wrote
                long at = Long.parseLong(parts[0]);
                if (at >= cutoffMs) return out;
                String partition = partitionOf(parts[1]);
                Optional<BlobInfo> blob = find(partition, parts[2]);
                if (blob.isPresent() && blob.get().uploadedAtMs() == at) {
                    out.add(blob.get());
                    if (out.size() == limit) return out;
                } else if (blob.isEmpty() || blob.get().uploadedAtMs() > at) {
                    deleteKey(o.key());   // stale: swept, or re-uploaded since (a later entry names it)
                }
            }
            token = listing.isTruncated() ? listing.nextContinuationToken() : null;
        } while (token != null);
        return out;
    }

    @Override
    public boolean delete(String partition, String blobId, long cutoffMs) {
        Optional<BlobInfo> blob = find(partition, blobId);
        if (blob.isEmpty() || blob.get().uploadedAtMs() >= cutoffMs) return false;
        deleteKey(blobKey(partition, blobId));
        deleteKey(indexKey(blob.get().uploadedAtMs(), partition, blobId));
        return true;
    }

    @Override
    public int purgeIncompleteUploads(long startedBeforeMs) {
        String prefix = root + "uploads/";
        Set<String> purged = new HashSet<>();
        String token = null;
        boolean more = true;
        while (more) {
            String page = token;
            ListObjectsV2Response listing = call(() -> s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix)
                    .continuationToken(page)));
            more = listing.isTruncated();
            token = listing.nextContinuationToken();
            for (S3Object o : listing.contents()) {
                if (startedAt(o.key(), prefix) >= startedBeforeMs) {   // keys sort by start time
                    more = false;
                    break;
                }
                deleteKey(o.key());
                purged.add(o.key());
            }
        }
        // direct uploads never referenced: their keys carry no time, so S3's own LastModified decides (its clock,
        // not ours; the sweep's grace is hours, far above any skew between the two)
        String direct = root + "direct/";
        String next = null;
        do {
            String page = next;
            ListObjectsV2Response listing = call(() -> s3.listObjectsV2(b -> b.bucket(bucket).prefix(direct)
                    .continuationToken(page)));
            for (S3Object o : listing.contents()) {
                if (o.lastModified().toEpochMilli() < startedBeforeMs) {
                    deleteKey(o.key());
                    purged.add(o.key());
                }
            }
            next = listing.isTruncated() ? listing.nextContinuationToken() : null;
        } while (next != null);
        for (MultipartUpload u : call(() -> s3.listMultipartUploads(b -> b.bucket(bucket).prefix(prefix))).uploads()) {
            if (startedAt(u.key(), prefix) < startedBeforeMs) {
                call(() -> s3.abortMultipartUpload(b -> b.bucket(bucket).key(u.key()).uploadId(u.uploadId())));
                purged.add(u.key());
            }
        }
        return purged.size();
    }

    private static long startedAt(String key, String prefix) {
        int slash = key.indexOf('/', prefix.length());
        try {
            return Long.parseLong(key.substring(prefix.length(), slash < 0 ? key.length() : slash));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;   // not a key this store wrote: never purged
        }
    }

    // ------------------------------------------------------------------ keys

    String blobKey(String partition, String blobId) { return root + "blobs/" + segment(partition) + "/" + blobId; }

    String directKey(String partition, String blobId) {
        return root + "direct/" + segment(partition) + "/" + blobId;
    }

    String indexKey(long uploadedAtMs, String partition, String blobId) {
        return root + "uploaded/" + time(uploadedAtMs) + "/" + segment(partition) + "/" + blobId;
    }

    /** Fixed width, so that lexicographic key order is numeric order. */
    private static String time(long ms) { return String.format("%019d", Math.max(0, ms)); }

    static String segment(String partition) {
        if (partition.isEmpty()) return "%";
        return URLEncoder.encode(partition, StandardCharsets.UTF_8).replace("*", "%2A").replace(".", "%2E");
    }

    static String partitionOf(String segment) {
        return segment.equals("%") ? "" : URLDecoder.decode(segment, StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ plumbing

    private void emptyObject(String key) {
        call(() -> s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.empty()));
    }

    private void deleteKey(String key) { call(() -> s3.deleteObject(b -> b.bucket(bucket).key(key))); }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static String idOf(MessageDigest sha) { return "sha256:" + HexFormat.of().formatHex(sha.digest()); }
}

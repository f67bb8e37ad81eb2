package syncular.jakarta.sync;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The native HMAC signed-URL scheme (SPEC §5.4, §5.9.5; REF signed-url.ts), for every object this server hands out by
 * URL: {@code st = base64url(payloadJson) + "." + base64url(HMAC-SHA256(key, payloadJson))}, the URL
 * {@code <base>/<objectId>?st=<token>}, {@code exp} in unix seconds, verified with a 60 s skew. One claim set per
 * kind of object, each with a key no other kind has, so a token of one kind never verifies as another:
 * <ul>
 *   <li>segment (§5.4): {@code {"v":1,"seg","sd","aud","exp"}};</li>
 *   <li>blob download (§5.9.5): {@code {"v":1,"blob","aud","exp"}}, no scope digest: the download was authorized
 *       against the referencing rows just before issuance, and the bytes are immutable;</li>
 *   <li>blob upload (§5.9.3 grant, served by this server when its store issues no presigned PUT of its own):
 *       {@code {"v":1,"put","aud","len","exp"}}, {@code len} the declared size the grant was checked against.</li>
 * </ul>
 * {@code aud} seals the partition id (deterministic AES-GCM under a key derived from the signing key, its nonce a MAC
 * of the partition): stable per partition and opaque to clients, as §5.4 requires, yet the verifier recovers the
 * partition from it, which a blob URL needs (a blob is stored per partition, and the URL carries nothing else that
 * names it). One key for every node (configuration, never generated per node): a URL minted on one node verifies on
 * any other. An instance mints under one base: a segment signer ({@code <mount>/segments}) and a blob signer
 * ({@code <mount>/blobs}) are two instances, possibly on one key. Thread-safe; a {@link Mac} or {@link Cipher} is made
 * per call.
 */
public final class SignedUrls implements SegmentUrls, BlobUrls {
    /** SPEC §5.4: the verifier's clock-error allowance past {@code exp}. */
    public static final long SKEW_SECONDS = 60;
    /** REF: the default TTL, 15 minutes, the spec's SHOULD upper bound. */
    public static final long DEFAULT_TTL_MS = 900_000;
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final byte[] AUDIENCE_LABEL = "syncular.signed-urls.aud\0".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SEAL_LABEL = "syncular.signed-urls.seal\0".getBytes(StandardCharsets.UTF_8);
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final Set<String> SEGMENT_CLAIMS = Set.of("v", "seg", "sd", "aud", "exp");
    private static final Set<String> BLOB_CLAIMS = Set.of("v", "blob", "aud", "exp");
    private static final Set<String> UPLOAD_CLAIMS = Set.of("v", "put", "aud", "len", "exp");

    private final byte[] key;
    private final SecretKeySpec sealKey;
    private final String baseUrl;
    private final LongSupplier ttlMs;

    /**
     * {@code key}: at least 32 bytes; {@code baseUrl}: the prefix a client fetches (this server's
     * {@code <mount>/segments} or {@code <mount>/blobs}, or a CDN in front of it), without a trailing slash;
     * {@code ttlMs}: read at each issuance (the conformance host changes it at run time).
     */
    public SignedUrls(byte[] key, String baseUrl, LongSupplier ttlMs) {
        if (key.length < 32) throw new IllegalArgumentException("a signed-URL key needs at least 32 bytes");
        this.key = key.clone();
        this.sealKey = new SecretKeySpec(mac(SEAL_LABEL), "AES");
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.ttlMs = ttlMs;
    }

    /** A descriptor's {@code url} and {@code urlExpiresAtMs} (§5.4: present together). */
    public record Issued(String url, long urlExpiresAtMs) { }

    /** The claims of a segment token whose MAC verified. */
    public record Claims(String segmentId, String scopeDigest, String audience, long exp) { }

    /** What a verified blob token grants: the bytes of {@code blobId} in {@code partition}, until {@code exp}. */
    public record BlobGrant(String partition, String blobId, long exp) { }

    /** What a verified upload token grants: a PUT of at most {@code byteLength} bytes of {@code blobId}. */
    public record UploadGrant(String partition, String blobId, long byteLength, long exp) { }

    /** Mints the URL for one segment of {@code partition} under {@code scopeDigest}; called only inside the pull. */
    @Override
    public Issued issue(String segmentId, String scopeDigest, String partition, long nowMs) {
        long exp = exp(nowMs);
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("v", 1);
        claims.put("seg", segmentId);
        claims.put("sd", scopeDigest);
        claims.put("aud", audience(partition));
        claims.put("exp", exp);
        return issued(segmentId, claims, exp);
    }

    /** §5.9.5: the download URL of a blob, minted only after the referencing rows authorized the actor. */
    @Override
    public Issued download(String partition, String blobId, long nowMs) {
        long exp = exp(nowMs);
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("v", 1);
        claims.put("blob", blobId);
        claims.put("aud", audience(partition));
        claims.put("exp", exp);
        return issued(blobId, claims, exp);
    }

    /** §5.9.3: the upload URL of a grant, minted only after host authentication and the size cap. */
    @Override
    public Issued upload(String partition, String blobId, long byteLength, long nowMs) {
        long exp = exp(nowMs);
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("v", 1);
        claims.put("put", blobId);
        claims.put("aud", audience(partition));
        claims.put("len", byteLength);
        claims.put("exp", exp);
        return issued(blobId, claims, exp);
    }

    @Override
    public boolean active() { return true; }

    /** REF: exp = floor(now/1000) + ttlSeconds; a TTL of 0 mints a URL born expired (urlExpiresAtMs ≤ now). */
    private long exp(long nowMs) { return Math.floorDiv(nowMs, 1000) + ttlMs.getAsLong() / 1000; }

    private Issued issued(String objectId, Map<String, Object> claims, long exp) {
        byte[] payload = Json.write(claims).getBytes(StandardCharsets.UTF_8);
        String token = B64.encodeToString(payload) + "." + B64.encodeToString(mac(payload));
        return new Issued(baseUrl + "/" + objectId + "?st=" + token, exp * 1000);
    }

    /**
     * The opaque {@code aud} of a partition: {@code base64url(nonce ‖ AES-GCM(sealKey, nonce, partition))}, the nonce
     * the first 12 bytes of HMAC(key, label ‖ partition). Deterministic, so stable per partition; a nonce repeats only
     * with its plaintext, which is what makes a deterministic GCM safe here.
     */
    public String audience(String partition) {
        byte[] plain = partition.getBytes(StandardCharsets.UTF_8);
        byte[] nonce = Arrays.copyOf(mac(concat(AUDIENCE_LABEL, plain)), NONCE_BYTES);
        try {
            Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
            gcm.init(Cipher.ENCRYPT_MODE, sealKey, new GCMParameterSpec(TAG_BITS, nonce));
            return B64.encodeToString(concat(nonce, gcm.doFinal(plain)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/GCM is missing from this JVM", e);
        }
    }

    /** The partition an {@link #audience} seals; empty for anything this key did not seal. */
    Optional<String> partitionOf(String audience) {
        byte[] sealed;
        try {
            sealed = Base64.getUrlDecoder().decode(audience);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (sealed.length < NONCE_BYTES + TAG_BITS / 8) return Optional.empty();
        String partition;
        try {
            Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
            gcm.init(Cipher.DECRYPT_MODE, sealKey, new GCMParameterSpec(TAG_BITS, sealed, 0, NONCE_BYTES));
            partition = new String(gcm.doFinal(sealed, NONCE_BYTES, sealed.length - NONCE_BYTES),
                    StandardCharsets.UTF_8);
        } catch (AEADBadTagException e) {
            return Optional.empty();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/GCM is missing from this JVM", e);
        }
        // only the one spelling this key mints: a nonce that is not the partition's own is not an audience of ours
        return audience(partition).equals(audience) ? Optional.of(partition) : Optional.empty();
    }

    /**
     * Checks the token's form and MAC and that it names {@code segmentId}, then its expiry: a bad form, a bad MAC, an
     * unknown version or another segment is 403 {@code sync.forbidden} (tampering); a genuine token past {@code exp}
     * plus the skew is 404 {@code sync.segment_expired}, the code whose recovery is a re-pull (§5.4, §10.2). The
     * caller still matches {@code sd} and {@code aud} against the stored publications.
     */
    public Claims verify(String token, String segmentId, long nowMs) {
        Supplier<SyncException> forbidden = () -> new SyncException(ErrorCode.SYNC_FORBIDDEN,
                "the signed URL is not valid for this segment (§5.4)");
        Map<?, ?> claims = open(token, SEGMENT_CLAIMS, forbidden);
        if (!(claims.get("seg") instanceof String seg) || !(claims.get("sd") instanceof String sd)
                || !(claims.get("aud") instanceof String aud)) {
            throw forbidden.get();
        }
        long exp = whole(claims.get("exp"), forbidden);
        if (!seg.equals(segmentId)) throw forbidden.get();
        if (expired(exp, nowMs)) {
            throw new SyncException(ErrorCode.SYNC_SEGMENT_EXPIRED,
                    "the signed URL has expired; pull again for a fresh descriptor (§5.4)");
        }
        return new Claims(seg, sd, aud, exp);
    }

    /**
     * Checks a blob download token for {@code blobId} (§5.9.5): anything but a genuine, unexpired token of this key
     * naming this blob is 403 {@code blob.forbidden}; expiry says so in its message, since its recovery (request the
     * blob again, which re-authorizes and mints a fresh URL) is the same as for every other failure.
     */
    public BlobGrant verifyDownload(String token, String blobId, long nowMs) {
        Supplier<SyncException> forbidden = () -> new SyncException(ErrorCode.BLOB_FORBIDDEN,
                "the signed URL is not valid for this blob (§5.9.5)");
        Map<?, ?> claims = open(token, BLOB_CLAIMS, forbidden);
        if (!(claims.get("blob") instanceof String blob) || !blob.equals(blobId)) throw forbidden.get();
        long exp = whole(claims.get("exp"), forbidden);
        String partition = partition(claims, forbidden);
        if (expired(exp, nowMs)) {
            throw new SyncException(ErrorCode.BLOB_FORBIDDEN,
                    "the signed URL has expired; request the blob again for a fresh URL (§5.9.5)");
        }
        return new BlobGrant(partition, blob, exp);
    }

    /** Checks an upload token for {@code blobId} (§5.9.3), as {@link #verifyDownload} does a download token. */
    public UploadGrant verifyUpload(String token, String blobId, long nowMs) {
        Supplier<SyncException> forbidden = () -> new SyncException(ErrorCode.BLOB_FORBIDDEN,
                "the upload URL is not valid for this blob (§5.9.3)");
        Map<?, ?> claims = open(token, UPLOAD_CLAIMS, forbidden);
        if (!(claims.get("put") instanceof String blob) || !blob.equals(blobId)) throw forbidden.get();
        long exp = whole(claims.get("exp"), forbidden);
        long length = whole(claims.get("len"), forbidden);
        if (length < 0) throw forbidden.get();
        String partition = partition(claims, forbidden);
        if (expired(exp, nowMs)) {
            throw new SyncException(ErrorCode.BLOB_FORBIDDEN,
                    "the upload URL has expired; ask for a fresh upload grant (§5.9.3)");
        }
        return new UploadGrant(partition, blob, length, exp);
    }

    private static boolean expired(long exp, long nowMs) { return exp < Math.floorDiv(nowMs, 1000) - SKEW_SECONDS; }

    /**
     * The claims of a token whose form and MAC verify, with exactly the keys of one kind and version 1; anything
     * else is {@code refusal}, one error for every failure, so that a prober learns nothing about which check it
     * tripped.
     */
    private Map<?, ?> open(String token, Set<String> keys, Supplier<SyncException> refusal) {
        if (token == null) throw refusal.get();
        int dot = token.indexOf('.');
        if (dot <= 0 || dot != token.lastIndexOf('.')) throw refusal.get();
        byte[] payload = canonicalBase64Url(token.substring(0, dot), refusal);
        byte[] given = canonicalBase64Url(token.substring(dot + 1), refusal);
        // constant time: the comparison's duration tells nothing about how many leading bytes matched
        if (!MessageDigest.isEqual(mac(payload), given)) throw refusal.get();
        Map<?, ?> claims;
        try {
            if (!(Json.parse(new String(payload, StandardCharsets.UTF_8)) instanceof Map<?, ?> m)) throw refusal.get();
            claims = m;
        } catch (Json.JsonException e) {
            throw refusal.get();
        }
        if (!claims.keySet().equals(keys) || !(claims.get("v") instanceof BigDecimal v)
                || v.compareTo(BigDecimal.ONE) != 0) {
            throw refusal.get();
        }
        return claims;
    }

    private String partition(Map<?, ?> claims, Supplier<SyncException> refusal) {
        if (!(claims.get("aud") instanceof String aud)) throw refusal.get();
        return partitionOf(aud).orElseThrow(refusal);
    }

    private static long whole(Object number, Supplier<SyncException> refusal) {
        if (!(number instanceof BigDecimal n)) throw refusal.get();
        try {
            return n.longValueExact();
        } catch (ArithmeticException e) {
            throw refusal.get();
        }
    }

    /** Decodes unpadded base64url and refuses any other spelling of the same bytes (padding, stray low bits). */
    private static byte[] canonicalBase64Url(String text, Supplier<SyncException> refusal) {
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw refusal.get();
        }
        if (!B64.encodeToString(bytes).equals(text)) throw refusal.get();
        return bytes;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private byte[] mac(byte[] input) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(input);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
        }
    }
}

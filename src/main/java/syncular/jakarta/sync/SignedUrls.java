package syncular.jakarta.sync;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The native HMAC signed-URL scheme for segments (SPEC §5.4, REF signed-url.ts): {@code st =
 * base64url(payloadJson) + "." + base64url(HMAC-SHA256(key, payloadJson))} with the claims
 * {@code {"v":1,"seg","sd","aud","exp"}} in that order, {@code exp} in unix seconds, the URL
 * {@code <base>/<segmentId>?st=<token>}. {@code aud} is a keyed derivation of the partition id, so it is stable per
 * partition and reveals nothing of it. One key for every node (configuration, never generated per node): a URL
 * minted on one node verifies on any other. Thread-safe; a {@link Mac} is made per call.
 */
public final class SignedUrls implements SegmentUrls {
    /** SPEC §5.4: the verifier's clock-error allowance past {@code exp}. */
    public static final long SKEW_SECONDS = 60;
    /** REF: the default TTL, 15 minutes, the spec's SHOULD upper bound. */
    public static final long DEFAULT_TTL_MS = 900_000;
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final byte[] AUDIENCE_LABEL = "syncular.signed-urls.aud\0".getBytes(StandardCharsets.UTF_8);

    private final byte[] key;
    private final String baseUrl;
    private final LongSupplier ttlMs;

    /**
     * {@code key}: at least 32 bytes; {@code baseUrl}: the prefix a client fetches (this server's
     * {@code <mount>/segments} or a CDN in front of it), without a trailing slash; {@code ttlMs}: read at each
     * issuance (the conformance host changes it at run time).
     */
    public SignedUrls(byte[] key, String baseUrl, LongSupplier ttlMs) {
        if (key.length < 32) throw new IllegalArgumentException("a signed-URL key needs at least 32 bytes");
        this.key = key.clone();
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.ttlMs = ttlMs;
    }

    /** A descriptor's {@code url} and {@code urlExpiresAtMs} (§5.4: present together). */
    public record Issued(String url, long urlExpiresAtMs) { }

    /** The claims of a token whose MAC verified. */
    public record Claims(String segmentId, String scopeDigest, String audience, long exp) { }

    /** Mints the URL for one segment of {@code partition} under {@code scopeDigest}; called only inside the pull. */
    @Override
    public Issued issue(String segmentId, String scopeDigest, String partition, long nowMs) {
        // REF: exp = floor(now/1000) + ttlSeconds; a TTL of 0 mints a URL born expired (urlExpiresAtMs ≤ now)
        long exp = Math.floorDiv(nowMs, 1000) + ttlMs.getAsLong() / 1000;
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("v", 1);
        claims.put("seg", segmentId);
        claims.put("sd", scopeDigest);
        claims.put("aud", audience(partition));
        claims.put("exp", exp);
        byte[] payload = Json.write(claims).getBytes(StandardCharsets.UTF_8);
        String token = B64.encodeToString(payload) + "." + B64.encodeToString(mac(payload));
        return new Issued(baseUrl + "/" + segmentId + "?st=" + token, exp * 1000);
    }

    /** The opaque {@code aud} of a partition: HMAC(key, label ‖ partition), first 16 bytes, base64url. */
    public String audience(String partition) {
        byte[] label = partition.getBytes(StandardCharsets.UTF_8);
        byte[] input = new byte[AUDIENCE_LABEL.length + label.length];
        System.arraycopy(AUDIENCE_LABEL, 0, input, 0, AUDIENCE_LABEL.length);
        System.arraycopy(label, 0, input, AUDIENCE_LABEL.length, label.length);
        return B64.encodeToString(java.util.Arrays.copyOf(mac(input), 16));
    }

    /**
     * Checks the token's form and MAC and that it names {@code segmentId}, then its expiry: a bad form, a bad MAC, an
     * unknown version or another segment is 403 {@code sync.forbidden} (tampering); a genuine token past {@code exp}
     * plus the skew is 404 {@code sync.segment_expired}, the code whose recovery is a re-pull (§5.4, §10.2). The
     * caller still matches {@code sd} and {@code aud} against the stored publications.
     */
    public Claims verify(String token, String segmentId, long nowMs) {
        if (token == null) throw forbidden();
        int dot = token.indexOf('.');
        if (dot <= 0 || dot != token.lastIndexOf('.')) throw forbidden();
        byte[] payload = canonicalBase64Url(token.substring(0, dot));
        byte[] given = canonicalBase64Url(token.substring(dot + 1));
        // constant time: the comparison's duration tells nothing about how many leading bytes matched
        if (!MessageDigest.isEqual(mac(payload), given)) throw forbidden();
        Map<?, ?> claims;
        try {
            if (!(Json.parse(new String(payload, StandardCharsets.UTF_8)) instanceof Map<?, ?> m)) throw forbidden();
            claims = m;
        } catch (Json.JsonException e) {
            throw forbidden();
        }
        if (!(claims.get("v") instanceof BigDecimal v) || v.compareTo(BigDecimal.ONE) != 0
                || !(claims.get("seg") instanceof String seg) || !(claims.get("sd") instanceof String sd)
                || !(claims.get("aud") instanceof String aud) || !(claims.get("exp") instanceof BigDecimal expNumber)) {
            throw forbidden();
        }
        long exp;
        try {
            exp = expNumber.longValueExact();
        } catch (ArithmeticException e) {
            throw forbidden();
        }
        if (!seg.equals(segmentId)) throw forbidden();
        if (exp < Math.floorDiv(nowMs, 1000) - SKEW_SECONDS) {
            throw new SyncException(ErrorCode.SYNC_SEGMENT_EXPIRED,
                    "the signed URL has expired; pull again for a fresh descriptor (§5.4)");
        }
        return new Claims(seg, sd, aud, exp);
    }

    /** Decodes unpadded base64url and refuses any other spelling of the same bytes (padding, stray low bits). */
    private static byte[] canonicalBase64Url(String text) {
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw forbidden();
        }
        if (!B64.encodeToString(bytes).equals(text)) throw forbidden();
        return bytes;
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

    private static SyncException forbidden() {
        // one message for every failure: a prober learns nothing about which check it tripped
        return new SyncException(ErrorCode.SYNC_FORBIDDEN, "the signed URL is not valid for this segment (§5.4)");
    }
}

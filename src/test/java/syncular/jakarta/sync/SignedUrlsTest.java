package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.ErrorCode;

/**
 * SPEC §5.4/§5.9 native tokens: the exact REF segment token shape and the spec's blob download claims, the sealed
 * audience, and every tamper, expiry, kind and key check of the verifiers.
 */
class SignedUrlsTest {
    private static final byte[] KEY = "a signed-url test key of 32+ bytes".getBytes(StandardCharsets.UTF_8);
    private static final String SEG = "sha256:" + "ab".repeat(32);
    private static final String SD = "sd-digest";
    private static final long NOW = 1_700_000_000_500L;
    private final SignedUrls urls = new SignedUrls(KEY, "https://cdn.example/segments/", () -> 900_000);

    private static String token(String url) { return url.substring(url.indexOf("?st=") + 4); }

    private static ErrorCode refusal(SignedUrls u, String token, String seg, long now) {
        return assertThrows(SyncException.class, () -> u.verify(token, seg, now)).code();
    }

    @Test
    void mintsTheReferenceTokenShapeAndUrl() throws Exception {
        SignedUrls.Issued issued = urls.issue(SEG, SD, "p1", NOW);
        long exp = NOW / 1000 + 900;
        assertEquals(exp * 1000, issued.urlExpiresAtMs());
        assertTrue(issued.url().startsWith("https://cdn.example/segments/" + SEG + "?st="), issued.url());
        String[] parts = token(issued.url()).split("\\.");
        String payload = new String(Base64.getUrlDecoder().decode(parts[0]), StandardCharsets.UTF_8);
        assertEquals("{\"v\":1,\"seg\":\"" + SEG + "\",\"sd\":\"sd-digest\",\"aud\":\"" + urls.audience("p1")
                + "\",\"exp\":" + exp + "}", payload);
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(KEY, "HmacSHA256"));
        assertEquals(Base64.getUrlEncoder().withoutPadding().encodeToString(
                mac.doFinal(payload.getBytes(StandardCharsets.UTF_8))), parts[1]);
        assertTrue(!parts[0].contains("=") && !parts[1].contains("="), "base64url unpadded");
    }

    @Test
    void aGenuineTokenVerifiesToItsClaims() {
        SignedUrls.Claims c = urls.verify(token(urls.issue(SEG, SD, "p1", NOW).url()), SEG, NOW);
        assertEquals(new SignedUrls.Claims(SEG, SD, urls.audience("p1"), NOW / 1000 + 900), c);
    }

    @Test
    void audienceIsStablePerPartitionKeyedAndOpaque() {
        assertEquals(urls.audience("p1"), urls.audience("p1"));
        assertNotEquals(urls.audience("p1"), urls.audience("p2"));
        SignedUrls other = new SignedUrls("another key, also of 32 bytes or more".getBytes(), "x", () -> 0);
        assertNotEquals(urls.audience("p1"), other.audience("p1"));
        assertTrue(!urls.audience("p1").contains("p1"));
    }

    @Test
    void everyTamperedPartIsForbidden() {
        String t = token(urls.issue(SEG, SD, "p1", NOW).url());
        int dot = t.indexOf('.');
        String payload = t.substring(0, dot);
        String mac = t.substring(dot + 1);
        String json = new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8);
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (String forged : new String[] {
                json.replace("\"exp\":", "\"exp\":1"),                 // later expiry
                json.replace(SD, "sd-other"),                          // other scopes
                json.replace(urls.audience("p1"), urls.audience("p2")),// other partition
                json.replace(SEG, "sha256:" + "cd".repeat(32)),        // other segment
                json.replace("\"v\":1", "\"v\":2")}) {
            String tampered = b64.encodeToString(forged.getBytes(StandardCharsets.UTF_8)) + "." + mac;
            assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, tampered, SEG, NOW), forged);
        }
        char last = mac.charAt(mac.length() - 1);
        String flipped = mac.substring(0, mac.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, payload + "." + flipped, SEG, NOW), "signature bit");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, payload + "." + mac.substring(1), SEG, NOW), "short MAC");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, payload + "." + mac + "=", SEG, NOW), "padding spelling");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, payload + "." + mac + ".x", SEG, NOW), "extra part");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, payload, SEG, NOW), "no MAC");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, "." + mac, SEG, NOW), "no payload");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, null, SEG, NOW), "no token");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, "%%." + mac, SEG, NOW), "not base64url");
    }

    @Test
    void aGenuineTokenForAnotherSegmentPathIsForbidden() {
        String t = token(urls.issue(SEG, SD, "p1", NOW).url());
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, t, "sha256:" + "cd".repeat(32), NOW));
    }

    @Test
    void aWellFormedMacOverNonClaimsIsForbidden() throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(KEY, "HmacSHA256"));
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (String body : new String[] {"[1]", "not json", "{\"v\":1,\"seg\":\"" + SEG + "\",\"sd\":\"s\"}",
                "{\"v\":1,\"seg\":\"" + SEG + "\",\"sd\":\"s\",\"aud\":\"a\",\"exp\":1.5}"}) {
            byte[] p = body.getBytes(StandardCharsets.UTF_8);
            String t = b64.encodeToString(p) + "." + b64.encodeToString(mac.doFinal(p));
            assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, t, SEG, NOW), body);
        }
    }

    @Test
    void aTokenUnderAnotherKeyIsForbidden() {
        SignedUrls other = new SignedUrls("another key, also of 32 bytes or more".getBytes(), "https://cdn.example/segments",
                () -> 900_000);
        String t = token(other.issue(SEG, SD, "p1", NOW).url());
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, t, SEG, NOW));
    }

    @Test
    void expiryHoldsUntilSixtySecondsPastExpAndThenIsSegmentExpired() {
        String t = token(urls.issue(SEG, SD, "p1", NOW).url());
        long expMs = (NOW / 1000 + 900) * 1000;
        urls.verify(t, SEG, expMs + 60_999);   // floor(now/1000) - 60 == exp: still within the skew
        assertEquals(ErrorCode.SYNC_SEGMENT_EXPIRED, refusal(urls, t, SEG, expMs + 61_000));
    }

    @Test
    void aZeroTtlMintsAUrlBornExpiredForTheClient() {
        SignedUrls zero = new SignedUrls(KEY, "https://cdn.example/segments", () -> 0);
        SignedUrls.Issued issued = zero.issue(SEG, SD, "p1", NOW);
        assertTrue(issued.urlExpiresAtMs() <= NOW, "urlExpiresAtMs " + issued.urlExpiresAtMs() + " vs now " + NOW);
    }

    @Test
    void refusesAShortKey() {
        assertThrows(IllegalArgumentException.class, () -> new SignedUrls(new byte[31], "x", () -> 0));
    }

    private static final String BLOB = "sha256:" + "ef".repeat(32);
    private final SignedUrls blobs = new SignedUrls(KEY, "https://sync.example/syncular/blobs", () -> 900_000);

    private static String claims(String url) {
        String t = token(url);
        return new String(Base64.getUrlDecoder().decode(t.substring(0, t.indexOf('.'))), StandardCharsets.UTF_8);
    }

    private static String resigned(String json) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(KEY, "HmacSHA256"));
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return b64.encodeToString(p) + "." + b64.encodeToString(mac.doFinal(p));
    }

    @Test
    void theAudienceSealsThePartitionSoOnlyTheKeyRecoversIt() {
        String aud = urls.audience("tenant/42 ü");
        assertEquals("tenant/42 ü", urls.partitionOf(aud).orElseThrow());
        assertEquals(aud, urls.audience("tenant/42 ü"), "deterministic: stable per partition");
        assertEquals("", urls.partitionOf(urls.audience("")).orElseThrow(), "the empty partition too");
        SignedUrls other = new SignedUrls("another key, also of 32 bytes or more".getBytes(), "x", () -> 0);
        assertTrue(other.partitionOf(aud).isEmpty(), "another key opens nothing");
        byte[] raw = Base64.getUrlDecoder().decode(aud);
        raw[raw.length - 1] ^= 1;
        assertTrue(urls.partitionOf(Base64.getUrlEncoder().withoutPadding().encodeToString(raw)).isEmpty(), "tag");
        raw = Base64.getUrlDecoder().decode(aud);
        raw[0] ^= 1;
        assertTrue(urls.partitionOf(Base64.getUrlEncoder().withoutPadding().encodeToString(raw)).isEmpty(), "nonce");
        assertTrue(urls.partitionOf("short").isEmpty());
        assertTrue(urls.partitionOf("%%").isEmpty());
    }

    @Test
    void mintsTheSpecsBlobDownloadClaimsUnderTheBlobBase() {
        SignedUrls.Issued issued = blobs.download("p1", BLOB, NOW);
        long exp = NOW / 1000 + 900;
        assertEquals(exp * 1000, issued.urlExpiresAtMs());
        assertTrue(issued.url().startsWith("https://sync.example/syncular/blobs/" + BLOB + "?st="), issued.url());
        assertEquals("{\"v\":1,\"blob\":\"" + BLOB + "\",\"aud\":\"" + blobs.audience("p1") + "\",\"exp\":" + exp
                + "}", claims(issued.url()));
        assertEquals(new SignedUrls.BlobGrant("p1", BLOB, exp), blobs.verifyDownload(token(issued.url()), BLOB, NOW));
    }

    @Test
    void mintsUploadClaimsWithTheGrantedLength() {
        SignedUrls.Issued issued = blobs.upload("p1", BLOB, 1234, NOW);
        long exp = NOW / 1000 + 900;
        assertEquals("{\"v\":1,\"put\":\"" + BLOB + "\",\"aud\":\"" + blobs.audience("p1") + "\",\"len\":1234,"
                + "\"exp\":" + exp + "}", claims(issued.url()));
        assertEquals(new SignedUrls.UploadGrant("p1", BLOB, 1234, exp),
                blobs.verifyUpload(token(issued.url()), BLOB, NOW));
    }

    @Test
    void aTokenOfOneKindNeverVerifiesAsAnother() {
        String segment = token(urls.issue(BLOB, SD, "p1", NOW).url());
        String download = token(blobs.download("p1", BLOB, NOW).url());
        String upload = token(blobs.upload("p1", BLOB, 10, NOW).url());
        assertEquals(ErrorCode.BLOB_FORBIDDEN, assertThrows(SyncException.class,
                () -> blobs.verifyDownload(segment, BLOB, NOW)).code());
        assertEquals(ErrorCode.BLOB_FORBIDDEN, assertThrows(SyncException.class,
                () -> blobs.verifyDownload(upload, BLOB, NOW)).code(), "an upload grant is no download");
        assertEquals(ErrorCode.BLOB_FORBIDDEN, assertThrows(SyncException.class,
                () -> blobs.verifyUpload(download, BLOB, NOW)).code(), "a download grant is no upload");
        assertEquals(ErrorCode.SYNC_FORBIDDEN, refusal(urls, download, BLOB, NOW), "a blob token is no segment's");
    }

    @Test
    void everyTamperedBlobTokenIsForbiddenWithOneMessage() throws Exception {
        String url = blobs.download("p1", BLOB, NOW).url();
        String json = claims(url);
        String mac = token(url).substring(token(url).indexOf('.') + 1);
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String other = "sha256:" + "01".repeat(32);
        for (String forged : new String[] {json.replace("\"exp\":", "\"exp\":1"),
                json.replace(blobs.audience("p1"), blobs.audience("p2")), json.replace(BLOB, other)}) {
            SyncException e = assertThrows(SyncException.class, () -> blobs.verifyDownload(
                    b64.encodeToString(forged.getBytes(StandardCharsets.UTF_8)) + "." + mac, BLOB, NOW));
            assertEquals(ErrorCode.BLOB_FORBIDDEN, e.code(), forged);
            assertEquals("the signed URL is not valid for this blob (§5.9.5)", e.getMessage());
        }
        assertEquals(ErrorCode.BLOB_FORBIDDEN, assertThrows(SyncException.class,
                () -> blobs.verifyDownload(token(url), other, NOW)).code(), "a genuine token on another blob's path");
        // well signed, yet not what this key mints: an audience it never sealed, an extra claim, a negative length
        for (String body : new String[] {json.replace(blobs.audience("p1"), "bm90IHNlYWxlZCBieSB1cyBhdCBhbGw"),
                json.replace("}", ",\"sd\":\"x\"}"),
                claims(blobs.upload("p1", BLOB, 5, NOW).url()).replace("\"len\":5", "\"len\":-5")}) {
            String t = resigned(body);
            boolean upload = body.contains("\"put\"");
            assertEquals(ErrorCode.BLOB_FORBIDDEN, assertThrows(SyncException.class, () -> {
                if (upload) blobs.verifyUpload(t, BLOB, NOW);
                else blobs.verifyDownload(t, BLOB, NOW);
            }).code(), body);
        }
    }

    @Test
    void aBlobTokenExpiresSixtySecondsPastExpWithItsOwnMessage() {
        String t = token(blobs.download("p1", BLOB, NOW).url());
        long expMs = (NOW / 1000 + 900) * 1000;
        blobs.verifyDownload(t, BLOB, expMs + 60_999);
        SyncException e = assertThrows(SyncException.class, () -> blobs.verifyDownload(t, BLOB, expMs + 61_000));
        assertEquals(ErrorCode.BLOB_FORBIDDEN, e.code());
        assertTrue(e.getMessage().contains("expired"), e.getMessage());
        String u = token(blobs.upload("p1", BLOB, 3, NOW).url());
        SyncException up = assertThrows(SyncException.class, () -> blobs.verifyUpload(u, BLOB, expMs + 61_000));
        assertEquals(ErrorCode.BLOB_FORBIDDEN, up.code());
        assertTrue(up.getMessage().contains("fresh upload grant"), up.getMessage());
    }
}

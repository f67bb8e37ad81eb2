package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

class HttpBodiesTest {
    @Test
    void acceptEncodingWeightsAreHonoured() {
        assertTrue(HttpBodies.accepts("gzip, deflate, br, zstd", "zstd"));
        assertTrue(HttpBodies.accepts("GZIP;q=0.5", "gzip"));
        assertFalse(HttpBodies.accepts("gzip;q=0, zstd", "gzip"));
        assertTrue(HttpBodies.accepts("gzip;q=abc", "gzip"), "a malformed weight is not a refusal");
        assertFalse(HttpBodies.accepts(null, "gzip"));
        assertFalse(HttpBodies.accepts("identity", "zstd"));
    }

    @Test
    void zstdOutputIsReadByTheReferenceZstdTool() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/zstd")), "the zstd command is not installed");
        byte[] body = "syncular ".repeat(2000).getBytes(StandardCharsets.UTF_8);
        byte[] zstd = compressed(body, "zstd");
        Process p = new ProcessBuilder("/usr/bin/zstd", "-d", "-c").start();
        p.getOutputStream().write(zstd);
        p.getOutputStream().close();
        byte[] decoded = p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        assertArrayEquals(body, decoded);
    }

    @Test
    void smallBodiesGoOutUncompressed() throws Exception {
        assertNull(entityCoding(new byte[100], "zstd, gzip"));
        assertEquals("gzip", entityCoding(new byte[5000], "gzip"));
        assertEquals("zstd", entityCoding(new byte[5000], "gzip, zstd"));
    }

    @Test
    void gzipRequestsAreDecodedAndCappedAfterDecoding() throws Exception {
        byte[] plain = new byte[10_000];
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        }
        assertArrayEquals(plain, HttpBodies.readRequest(new ByteArrayInputStream(out.toByteArray()), "gzip", 10_000));
        HttpBodies.RequestTooLarge tooBig = assertThrows(HttpBodies.RequestTooLarge.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(out.toByteArray()), "gzip", 9_999));
        assertEquals(9_999, tooBig.maxBytes);
        assertThrows(SyncException.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(new byte[] {1, 2, 3}), "gzip", 100));
        assertThrows(SyncException.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(new byte[0]), "br", 100));
    }

    @Test
    void aPlainBodyOverTheCapIs413() throws Exception {
        assertThrows(HttpBodies.RequestTooLarge.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(new byte[101]), null, 100));
        assertEquals(100, HttpBodies.readRequest(new ByteArrayInputStream(new byte[100]), null, 100).length);
    }

    /** Issue 13 item 5: each of these was an IOException, answered 500 sync.internal_error. */
    @Test
    void brokenGzipBodiesAreInvalidRequests() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write("a body long enough to be cut in the middle of its deflate data".repeat(20).getBytes());
        }
        byte[] whole = out.toByteArray();
        byte[] badCrc = whole.clone();
        badCrc[badCrc.length - 5] ^= 1;
        Map<String, byte[]> broken = Map.of(
                "empty", new byte[0],
                "magic only", new byte[] {0x1f, (byte) 0x8b},
                "header only", java.util.Arrays.copyOf(whole, 10),
                "truncated", java.util.Arrays.copyOf(whole, whole.length / 2),
                "trailer cut", java.util.Arrays.copyOf(whole, whole.length - 4),
                "bad checksum", badCrc,
                "not gzip", new byte[] {1, 2, 3});
        broken.forEach((name, body) -> {
            SyncException e = assertThrows(SyncException.class,
                    () -> HttpBodies.readRequest(new ByteArrayInputStream(body), "gzip", 100_000), name);
            assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code(), name);
        });
    }

    private static byte[] compressed(byte[] body, String accept) throws Exception {
        return HttpBodies.encode(body, accept).bytes();
    }

    private static String entityCoding(byte[] body, String accept) throws Exception {
        return HttpBodies.encode(body, accept).coding();
    }
}

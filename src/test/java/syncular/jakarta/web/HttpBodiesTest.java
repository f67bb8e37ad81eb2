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
        SyncException tooBig = assertThrows(SyncException.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(out.toByteArray()), "gzip", 9_999));
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, tooBig.code());
        assertThrows(SyncException.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(new byte[] {1, 2, 3}), "gzip", 100));
        assertThrows(SyncException.class,
                () -> HttpBodies.readRequest(new ByteArrayInputStream(new byte[0]), "br", 100));
    }

    private static byte[] compressed(byte[] body, String accept) throws Exception {
        return HttpBodies.encode(body, accept).bytes();
    }

    private static String entityCoding(byte[] body, String accept) throws Exception {
        return HttpBodies.encode(body, accept).coding();
    }
}

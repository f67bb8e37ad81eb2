package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.ResponseEncoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * The response spool (issue #5 "bounded memory"): a body within the threshold stays in memory, one beyond it goes
 * to a temporary file; either way the bytes equal the encoder's, and closing deletes the file.
 */
class ResponseSpoolTest {
    private static ResponseMessage response(int segments, int segmentBytes) {
        List<ResponseFrame> frames = new ArrayList<>();
        frames.add(RespHeader.v2(null, 1, "epoch", false));
        frames.add(SubStart.active("s", Map.of("v", List.of("a")), true));
        for (int i = 0; i < segments; i++) {
            byte[] payload = new byte[segmentBytes];
            for (int k = 0; k < payload.length; k++) payload[k] = (byte) (i * 31 + k);
            frames.add(new SegmentInline(payload));
        }
        frames.add(new SubEnd(7, null));
        return new ResponseMessage(2, frames);
    }

    private static Set<Path> spoolFiles() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("syncular-response-")).collect(Collectors.toSet());
        }
    }

    private static byte[] bytes(ResponseSpool spool) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        spool.writeTo(out);
        return out.toByteArray();
    }

    @Test
    void aSmallBodyStaysInMemory() throws IOException {
        ResponseMessage m = response(2, 100);
        Set<Path> before = spoolFiles();
        try (ResponseSpool spool = ResponseSpool.encode(m, 64 * 1024)) {
            assertFalse(spool.spilled());
            assertEquals(before, spoolFiles());
            assertArrayEquals(ResponseEncoder.encode(m), bytes(spool));
            assertEquals(ResponseEncoder.encode(m).length, spool.size());
        }
    }

    @Test
    void aLargeBodySpillsToATemporaryFileThatCloseDeletes() throws IOException {
        ResponseMessage m = response(40, 50_000);    // ~2 MB against a 256 KiB threshold
        Set<Path> before = spoolFiles();
        ResponseSpool spool = ResponseSpool.encode(m, 256 * 1024);
        assertTrue(spool.spilled());
        Set<Path> during = spoolFiles();
        during.removeAll(before);
        assertEquals(1, during.size(), "one temporary file while the body waits");
        byte[] expected = ResponseEncoder.encode(m);
        assertEquals(expected.length, spool.size());
        assertEquals(expected.length, Files.size(during.iterator().next()));
        byte[] read = bytes(spool);
        assertArrayEquals(expected, read);
        assertArrayEquals(expected, bytes(spool), "readable more than once until closed");
        spool.close();
        spool.close();
        assertFalse(Files.exists(during.iterator().next()), "close deletes the file");
        assertThrows(IllegalStateException.class, () -> bytes(spool));
    }

    @Test
    void theThresholdIsExactAndZeroAlwaysSpills() throws IOException {
        ResponseMessage m = response(1, 1000);
        int size = ResponseEncoder.encode(m).length;
        try (ResponseSpool exact = ResponseSpool.encode(m, size)) {
            assertFalse(exact.spilled());
        }
        try (ResponseSpool over = ResponseSpool.encode(m, size - 1)) {
            assertTrue(over.spilled());
            assertArrayEquals(ResponseEncoder.encode(m), bytes(over));
        }
        try (ResponseSpool zero = ResponseSpool.encode(m, 0)) {
            assertTrue(zero.spilled());
        }
    }

    @Test
    void writingAfterFinishIsRefused() {
        try (ResponseSpool spool = new ResponseSpool(10)) {
            spool.write(new byte[] {1, 2}, 0, 2);
            spool.finish();
            assertThrows(IllegalStateException.class, () -> spool.write(3));
            assertThrows(IllegalArgumentException.class, () -> new ResponseSpool(-1));
        }
    }
}

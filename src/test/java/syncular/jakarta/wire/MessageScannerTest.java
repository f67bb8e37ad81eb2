package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Finding the end of a chunked message (SPEC §8.7). */
class MessageScannerTest {
    @Test @Spec("§8.7")
    void findsTheEndOfEveryVectorAcrossEveryChunkSize() {
        for (Vectors.Binary v : Vectors.validBinaries()) {
            if (v.kind().equals("segment")) continue;
            for (int chunk : new int[] {1, 3, 7, 64, 100_000}) {
                MessageScanner s = new MessageScanner(1 << 20);
                Optional<MessageScanner.Scanned> done = Optional.empty();
                byte[] in = java.util.Arrays.copyOf(v.bytes(), v.bytes().length + 2); // two bytes past END
                for (int at = 0; at < in.length && done.isEmpty(); at += chunk) {
                    done = s.feed(in, at, Math.min(chunk, in.length - at));
                }
                assertTrue(done.isPresent(), v.name());
                assertArrayEquals(v.bytes(), done.get().message(), v.name());
                int fed = Math.min(in.length, ((v.bytes().length + chunk - 1) / chunk) * chunk);
                assertEquals(fed - v.bytes().length, done.get().excess(), v.name());
            }
        }
    }

    @Test @Spec("§8.7")
    void rejectsABadHeaderAndOversizedMessages() {
        assertThrows(DecodeException.class, () -> new MessageScanner(1024).feed("SSP1\1\0\1\0".getBytes()));
        byte[] header = {0x53, 0x53, 0x50, 0x32, 1, 0, 1, 0, 1, 0, 0, 0x10, 0}; // frame of 1 MiB declared
        assertThrows(DecodeException.class, () -> new MessageScanner(4096).feed(header));
        MessageScanner s = new MessageScanner(1 << 20);
        assertTrue(s.feed(new byte[] {0x53, 0x53, 0x50}).isEmpty());
        assertTrue(s.started());
    }
}

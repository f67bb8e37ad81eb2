package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A 16-byte input that declares a 2 GiB value fails with the typed error without allocating it: every length is
 * checked against the remaining bytes first (SPEC-DIGEST §2, §17). Measured with the thread's allocated bytes.
 */
class AllocationTest {
    private static final long LIMIT = 1L << 20; // 1 MiB

    @Test @Spec("Conventions: str")
    void twoGibStringInSixteenBytesIsRefusedWithoutAllocation() {
        byte[] in = HexFormat.of().parseHex("00000080" + "41".repeat(12)); // str length 2^31
        assertEquals(16, in.length);
        assertCheapFailure(() -> new WireReader(in).str("REQ_HEADER.clientId"));
    }

    @Test @Spec("§2.4")
    void twoGibRowStringIsRefusedWithoutAllocation() {
        byte[] in = HexFormat.of().parseHex("00" + "00000080" + "41".repeat(11));
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("s", TypeTag.STRING, false));
        assertCheapFailure(() -> RowCodec.decode(cols, in));
    }

    @Test @Spec("§5.2")
    void twoGibSegmentTableNameIsRefusedWithoutAllocation() {
        byte[] in = HexFormat.of().parseHex("53534732" + "0100" + "0000" + "00000080" + "41414141");
        assertCheapFailure(() -> RowsSegmentDecoder.decode(in));
    }

    @Test @Spec("§1.2")
    void twoGibFrameIsRefusedWithoutAllocation() {
        byte[] in = HexFormat.of().parseHex("5353503201000100" + "01" + "00000080" + "414141");
        assertCheapFailure(() -> RequestDecoder.decode(in));
    }

    @Test @Spec("Conventions: list")
    void hugeCountIsRefusedBeforeLooping() {
        // SUB_START-like scope map count 0xffffffff in a short input
        byte[] in = HexFormat.of().parseHex("ffffffff" + "00".repeat(12));
        assertCheapFailure(() -> new WireReader(in).scopeLists("SUB_START.effectiveScopes"));
    }

    private static void assertCheapFailure(Executable decode) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadAllocatedMemorySupported(), "allocation accounting unavailable");
        mx.setThreadAllocatedMemoryEnabled(true);
        for (int i = 0; i < 3; i++) assertThrows(DecodeException.class, decode); // warm-up: class loading, JIT
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        DecodeException e = assertThrows(DecodeException.class, decode);
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code());
        assertTrue(allocated < LIMIT, () -> allocated + " bytes allocated");
    }
}

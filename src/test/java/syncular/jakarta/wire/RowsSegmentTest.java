package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SSG2 rows segments (SPEC §5.2): block sizing of the streaming writer and the strict decoder's rules. */
class RowsSegmentTest {
    static final List<ColumnDescriptor> TODOS = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("list_id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, false),
            new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
            new ColumnDescriptor("position", TypeTag.INTEGER, false),
            new ColumnDescriptor("updated_at_ms", TypeTag.INTEGER, false));

    static Object[] todo(int i, int titleLength) {
        return new Object[] {"todo-" + i, "list-" + (i % 7), "t".repeat(titleLength), i % 2 == 0, (long) i, 1782993600000L + i};
    }

    @Test @Spec("§5.2")
    void writerCutsBlocksAtAThousandRows() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RowsSegmentWriter w = new RowsSegmentWriter(out, "todos", 1, TODOS);
        for (int i = 0; i < 2500; i++) w.writeRow(1 + i, todo(i, 10));
        w.finish();
        assertEquals(out.size(), w.bytesWritten());
        RowsSegment s = RowsSegmentDecoder.decode(out.toByteArray());
        assertEquals(List.of(1000, 1000, 500), s.blocks().stream().map(List::size).toList());
        assertEquals("todo-2499", s.blocks().get(2).get(499).values()[0]);
        assertEquals(2500, s.rowCount());
        assertArrayEquals(out.toByteArray(), RowsSegmentEncoder.encode(s));
    }

    @Test @Spec("§5.2")
    void writerCutsBlocksAtAbout256KiB() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RowsSegmentWriter w = new RowsSegmentWriter(out, "todos", 1, TODOS);
        // ~4 KiB rows: the 65th would push a block past 256 KiB, so it opens the next block
        for (int i = 0; i < 300; i++) w.writeRow(1, todo(i, 4000));
        w.finish();
        RowsSegment s = RowsSegmentDecoder.decode(out.toByteArray());
        for (int b = 0; b < s.blocks().size() - 1; b++) assertEquals(64, s.blocks().get(b).size());
        assertEquals(300, s.rowCount());
    }

    @Test @Spec("§5.2")
    void emptySegmentIsHeaderAndEndMarker() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RowsSegmentWriter(out, "t", 1, List.of()).finish();
        assertEquals(4 + 2 + 2 + 5 + 4 + 2 + 4, out.size());
        assertEquals(0, RowsSegmentDecoder.decode(out.toByteArray()).blocks().size());
    }

    @Test @Spec("§5.2")
    void writerRefusesBadRowsAndKeepsTheBlockIntact() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RowsSegmentWriter w = new RowsSegmentWriter(out, "todos", 1, TODOS);
        w.writeRow(1, todo(1, 3));
        Object[] bad = todo(2, 3);
        bad[3] = "yes";
        assertThrows(IllegalArgumentException.class, () -> w.writeRow(2, bad));
        assertThrows(IllegalArgumentException.class, () -> w.writeRow(0, todo(3, 3)));
        w.writeRow(4, todo(4, 3));
        w.finish();
        assertEquals(2, RowsSegmentDecoder.decode(out.toByteArray()).rowCount());
    }

    @Test @Spec("§5.2")
    void decoderRejectsEveryStructuralFault() {
        byte[] good = segment(List.of(new ColumnDescriptor("a", TypeTag.INTEGER, true)), 5L, new Object[] {7L});
        RowsSegmentDecoder.decode(good);
        List<byte[]> bad = new ArrayList<>();
        bad.add(set(good, 0, 0x54));                      // magic
        bad.add(set(good, 4, 2));                         // format version
        bad.add(set(good, 6, 1));                         // flags
        int colAt = 8 + 4 + 1 + 4 + 2;                    // header, table "t", schemaVersion, column count
        bad.add(set(good, colAt + 4 + 1, 9));             // unknown type tag
        bad.add(set(good, colAt + 4 + 2, 3));             // column flag bits
        int blockAt = colAt + 4 + 1 + 2;
        assertEquals(17, good[blockAt + 4]);              // serverVersion 8 + bitmap 1 + i64 8
        bad.add(set(good, blockAt + 4, 18));              // byteLength mismatch (too long)
        bad.add(set(good, blockAt + 4, 16));              // byteLength mismatch (too short)
        bad.add(set(good, blockAt, 2));                   // rowCount mismatch
        bad.add(java.util.Arrays.copyOf(good, good.length - 4)); // missing end marker
        bad.add(java.util.Arrays.copyOf(good, good.length + 1)); // trailing byte
        bad.add(segment(List.of(new ColumnDescriptor("a", TypeTag.INTEGER, true)), 0L, new Object[] {7L})); // version 0
        for (byte[] b : bad) {
            DecodeException e = assertThrows(DecodeException.class, () -> RowsSegmentDecoder.decode(b));
            assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code());
        }
    }

    /** Builds a one-row segment without the writer's checks (serverVersion may be 0). */
    static byte[] segment(List<ColumnDescriptor> cols, long serverVersion, Object[] values) {
        WireWriter w = new WireWriter();
        w.raw(new byte[] {0x53, 0x53, 0x47, 0x32}).u16(1).u16(0).str("t").i32(1).u16(cols.size());
        for (ColumnDescriptor c : cols) w.str(c.name()).u8(c.type().code()).u8(c.nullable() ? 1 : 0);
        byte[] row = RowCodec.encode(cols, values);
        w.u32(1).u32(8 + row.length);
        w.f64Bits(serverVersion).raw(row);
        return w.u32(0).toByteArray();
    }

    static byte[] set(byte[] b, int at, int v) {
        byte[] c = b.clone();
        c[at] = (byte) v;
        return c;
    }
}

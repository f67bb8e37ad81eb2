package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class RowCodecTest {
    /** The vector table {@code notes} (SPEC-DIGEST §4; generate-vectors.ts). */
    static final List<ColumnDescriptor> NOTES = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, true),
            new ColumnDescriptor("body", TypeTag.STRING, false),
            new ColumnDescriptor("count", TypeTag.INTEGER, true),
            new ColumnDescriptor("score", TypeTag.FLOAT, false),
            new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
            new ColumnDescriptor("meta", TypeTag.JSON, true),
            new ColumnDescriptor("blob", TypeTag.BYTES, true));

    static final byte[] EXAMPLE = HexFormat.of().parseHex(
            "02" + "03000000" + hex("n-2") + "0a000000" + hex("plain body") + "f9ffffffffffffff"
                    + "000000000000c03f" + "00" + "0a000000" + hex("{\"k\":true}") + "05000000" + "000102feff");

    static String hex(String s) { return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8)); }

    static Object[] exampleValues() {
        return new Object[] {"n-2", null, "plain body", -7L, 0.125, false, "{\"k\":true}", new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff}};
    }

    @Test @Spec("§2.4")
    void decodesTheSpecExampleRow() {
        assertEquals(62, EXAMPLE.length);
        Object[] v = RowCodec.decode(NOTES, EXAMPLE);
        assertEquals("n-2", v[0]);
        assertNull(v[1]);
        assertEquals("plain body", v[2]);
        assertEquals(-7L, v[3]);
        assertEquals(0.125, v[4]);
        assertEquals(Boolean.FALSE, v[5]);
        assertEquals("{\"k\":true}", v[6]);
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff}, (byte[]) v[7]);
    }

    @Test @Spec("§2.4")
    void encodesTheSpecExampleRow() {
        assertArrayEquals(EXAMPLE, RowCodec.encode(NOTES, exampleValues()));
    }

    @Test @Spec("§2.4")
    void losslessDecodeKeepsNaNPayloadBits() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("f", TypeTag.FLOAT, false));
        byte[] row = HexFormat.of().parseHex("00" + "010000000000f07f"); // a signalling-NaN bit pattern
        Object[] v = RowCodec.decodeLossless(cols, row);
        assertEquals(new Float64Bits(0x7ff0000000000001L), v[0]);
        assertArrayEquals(row, RowCodec.encode(cols, v));
    }

    @Test @Spec("§2.4")
    void rejectsNullBitOnNonNullableColumn() {
        byte[] row = EXAMPLE.clone();
        row[0] = 0x03; // id is not nullable
        assertInvalid(() -> RowCodec.decode(NOTES, row));
    }

    @Test @Spec("§2.4")
    void rejectsSetPaddingBit() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("a", TypeTag.BOOLEAN, true));
        assertInvalid(() -> RowCodec.decode(cols, new byte[] {0x03}));
        assertArrayEquals(new Object[] {null}, RowCodec.decode(cols, new byte[] {0x01}));
    }

    @Test @Spec("§2.4")
    void rejectsTrailingBytesAndTruncation() {
        byte[] longer = Arrays.copyOf(EXAMPLE, EXAMPLE.length + 1);
        assertInvalid(() -> RowCodec.decode(NOTES, longer));
        for (int n = 0; n < EXAMPLE.length; n++) {
            byte[] shorter = Arrays.copyOf(EXAMPLE, n);
            assertInvalid(() -> RowCodec.decode(NOTES, shorter));
        }
    }

    @Test @Spec("§2.4 tag 5")
    void rejectsJsonColumnThatIsNotJson() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("j", TypeTag.JSON, false));
        assertInvalid(() -> RowCodec.decode(cols, row(w -> w.str("{not json"))));
        assertInvalid(() -> RowCodec.decode(cols, row(w -> w.str("1 2"))));
        assertEquals(" 7 ", RowCodec.decode(cols, row(w -> w.str(" 7 ")))[0]); // scalars, raw text kept
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(cols, new Object[] {"{"}));
    }

    @Test @Spec("§2.4 tag 2")
    void rejectsUnsafeInteger() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("i", TypeTag.INTEGER, false));
        byte[] max = row(w -> w.i64(WireReader.MAX_SAFE));
        assertEquals(WireReader.MAX_SAFE, RowCodec.decode(cols, max)[0]);
        byte[] over = max.clone();
        over[7] = 0x20; // 2^53 + (2^53 − 1) … well outside the safe range
        assertInvalid(() -> RowCodec.decode(cols, over));
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(cols, new Object[] {1L << 53}));
    }

    @Test @Spec("§2.4 tag 4")
    void rejectsBoolByteOtherThanZeroOrOne() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("b", TypeTag.BOOLEAN, false));
        assertInvalid(() -> RowCodec.decode(cols, new byte[] {0, 2}));
    }

    @Test @Spec("Conventions: str")
    void rejectsMalformedUtf8() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("s", TypeTag.STRING, false));
        for (String bad : new String[] {"c0af", "eda080", "f4908080", "ff", "e282"}) {
            byte[] b = HexFormat.of().parseHex(bad);
            assertInvalid(() -> RowCodec.decode(cols, row(w -> w.u32(b.length).raw(b))));
        }
        String nonBmp = "a\uD83D\uDE00é€";
        assertEquals(nonBmp, RowCodec.decode(cols, RowCodec.encode(cols, new Object[] {nonBmp}))[0]);
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(cols, new Object[] {"x\uD800"}));
    }

    @Test @Spec("§5.9.1")
    void validatesCanonicalBlobRef() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("r", TypeTag.BLOB_REF, true));
        String id = "sha256:" + "ab".repeat(32);
        String ok = "{\"blobId\":\"" + id + "\",\"byteLength\":12,\"mediaType\":\"text/plain\",\"name\":\"a.txt\"}";
        assertEquals(ok, RowCodec.decode(cols, row(w -> w.str(ok)))[0]);
        assertEquals(ok, new BlobRef(id, 12, "text/plain", "a.txt").toJson());
        for (String bad : new String[] {
                "{\"byteLength\":12,\"blobId\":\"" + id + "\"}",              // order
                "{\"blobId\":\"" + id + "\"}",                                 // missing length
                "{\"blobId\":\"" + id.toUpperCase() + "\",\"byteLength\":1}",   // hex case
                "{\"blobId\":\"" + id + "\",\"byteLength\":-1}",
                "{\"blobId\":\"" + id + "\",\"byteLength\":1.5}",
                "{\"blobId\":\"" + id + "\",\"byteLength\":9007199254740992}",
                "{\"blobId\":\"" + id + "\",\"byteLength\":1,\"extra\":1}",
                "{\"blobId\":\"" + id + "\",\"byteLength\":1,\"name\":null}",
                "{\"blobId\":\"" + id + "\",\"byteLength\":1,\"name\":\"n\",\"mediaType\":\"m\"}",
                "[]", "\"x\"", "{"}) {
            assertInvalid(() -> RowCodec.decode(cols, row(w -> w.str(bad))));
            assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(cols, new Object[] {bad}));
        }
    }

    @Test @Spec("§2.4")
    void encodeRefusesBadValues() {
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(NOTES, new Object[7]));
        Object[] v = exampleValues();
        v[0] = null;
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(NOTES, v));
        Object[] w = exampleValues();
        w[4] = "0.5";
        assertThrows(IllegalArgumentException.class, () -> RowCodec.encode(NOTES, w));
    }

    @Test @Spec("§2.4")
    void roundTripsEveryTypeWithManyColumns() {
        TypeTag[] tags = TypeTag.values();
        List<ColumnDescriptor> cols = new java.util.ArrayList<>();
        for (int i = 0; i < 19; i++) cols.add(new ColumnDescriptor("c" + i, tags[i % tags.length], true));
        Object[] v = new Object[19];
        for (int i = 0; i < 19; i++) {
            if (i % 3 == 0) continue;
            switch (tags[i % tags.length]) {
                case STRING: v[i] = "s" + i; break;
                case INTEGER: v[i] = (long) -i; break;
                case FLOAT: v[i] = i / 4.0; break;
                case BOOLEAN: v[i] = i % 2 == 0; break;
                case JSON: v[i] = "[" + i + "]"; break;
                case BLOB_REF: v[i] = new BlobRef("sha256:" + "0".repeat(64), i, null, null).toJson(); break;
                default: v[i] = new byte[] {(byte) i}; break;
            }
        }
        byte[] bytes = RowCodec.encode(cols, v);
        Object[] back = RowCodec.decode(cols, bytes);
        assertTrue(Arrays.deepEquals(v, back));
        assertArrayEquals(bytes, RowCodec.encode(cols, back));
    }

    static byte[] row(java.util.function.Consumer<WireWriter> value) {
        WireWriter w = new WireWriter();
        w.u8(0);
        value.accept(w);
        return w.toByteArray();
    }

    static void assertInvalid(org.junit.jupiter.api.function.Executable e) {
        DecodeException ex = assertThrows(DecodeException.class, e);
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, ex.code());
    }


    /** The vector table {@code docs} (generate-vectors.ts): a crdt column. */
    static final List<ColumnDescriptor> DOCS = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, false),
            new ColumnDescriptor("doc", TypeTag.CRDT, true));

    @Test @Spec("§2.4, App. A")
    void everyRowInsideTheMessageVectorsDecodesWithItsFixtureAndReencodesExactly() {
        java.util.Map<String, List<ColumnDescriptor>> fixtures = java.util.Map.of("notes", NOTES, "docs", DOCS);
        int rows = 0;
        for (Vectors.Binary v : Vectors.validBinaries()) {
            List<Object[]> found = new java.util.ArrayList<>(); // {table, bytes}
            if (v.kind().equals("request")) {
                for (PushCommit p : RequestDecoder.decode(v.bytes()).pushCommits()) {
                    for (PushCommit.Operation o : p.operations()) if (o.payload() != null) found.add(new Object[] {o.table(), o.payload()});
                }
            } else if (v.kind().equals("response")) {
                for (ResponseFrame f : ResponseDecoder.decode(v.bytes()).frames()) {
                    if (f instanceof CommitFrame c) {
                        for (CommitFrame.Change ch : c.changes()) {
                            if (ch.row() != null) found.add(new Object[] {c.tables().get(ch.tableIndex()), ch.row()});
                        }
                    } else if (f instanceof SegmentInline s) {
                        assertEquals("notes", s.segment().table());
                    }
                }
            }
            for (Object[] t : found) {
                List<ColumnDescriptor> cols = fixtures.get((String) t[0]);
                if (cols == null) continue; // conflict rows etc. of tables without a fixture here
                byte[] row = (byte[]) t[1];
                assertArrayEquals(row, RowCodec.encode(cols, RowCodec.decodeLossless(cols, row)), v.name());
                rows++;
            }
        }
        assertTrue(rows >= 5, "rows checked: " + rows);
    }
}

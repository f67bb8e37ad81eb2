package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The wire-3 sparse row (SPEC @008c36d5 §2.4 "Sparse rows") and the column bitmap it shares with conflictColumns. */
class SparseRowCodecTest {
    /** The push vector table (spec/vectors/push/manifest.json @def459ef): nine columns, every §2.4 type but blob_ref. */
    static final List<ColumnDescriptor> PUSH = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, true),
            new ColumnDescriptor("body", TypeTag.STRING, false),
            new ColumnDescriptor("count", TypeTag.INTEGER, true),
            new ColumnDescriptor("score", TypeTag.FLOAT, false),
            new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
            new ColumnDescriptor("meta", TypeTag.JSON, true),
            new ColumnDescriptor("blob", TypeTag.BYTES, true),
            new ColumnDescriptor("doc", TypeTag.CRDT, true));

    /** B.21h's table {@code tasks(id, project_id, title, done, priority, meta)}; the types are our choice. */
    static final List<ColumnDescriptor> TASKS = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("project_id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, true),
            new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
            new ColumnDescriptor("priority", TypeTag.INTEGER, true),
            new ColumnDescriptor("meta", TypeTag.JSON, true));

    static final HexFormat HEX = HexFormat.of();

    static byte[] hex(String h) { return HEX.parseHex(h.replace(" ", "")); }

    static String utf8(String s) { return RowCodecTest.hex(s); }

    /** push/sparse-row-full, derived (WIRE3-DELTA §2): every column present, title a present NULL. */
    static final byte[] SPARSE_ROW_FULL = hex("ff01" + "0200"
            + "03000000" + utf8("n-2") + "04000000" + utf8("body") + "f9ffffffffffffff" + "000000000000c03f" + "00"
            + "0a000000" + utf8("{\"k\":true}") + "04000000" + "0001feff" + "03000000" + "0102fe");

    static Object[] sparseRowFullValues() {
        return new Object[] {"n-2", null, "body", -7L, 0.125, false, "{\"k\":true}", new byte[] {0, 1, (byte) 0xfe, (byte) 0xff},
                new byte[] {1, 2, (byte) 0xfe}};
    }

    static void assertInvalid(String messagePart, Executable e) {
        DecodeException ex = assertThrows(DecodeException.class, e);
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, ex.code(), ex.getMessage());
        assertTrue(ex.getMessage().contains(messagePart), () -> "expected '" + messagePart + "' in: " + ex.getMessage());
    }

    // ------------------------------------------------------------------ pinned bytes

    @Test @Spec("§2.4 sparse rows, App. B.21h")
    void encodesTheByteIdenticalPatchOfB21h() {
        boolean[] present = {true, false, true, false, false, false};
        Object[] values = {"t1", null, "x", null, null, null};
        byte[] b = SparseRowCodec.encode(TASKS, 0, present, values);
        assertEquals("05" + "00" + "02000000" + utf8("t1") + "01000000" + utf8("x"), HEX.formatHex(b));
        assertEquals(13, b.length);
        SparseRow back = SparseRowCodec.decode(TASKS, 0, b);
        assertEquals(new SparseRow(present, values), back);
        assertEquals(2, back.presentCount());
        assertFalse(back.allPresent());
        assertFalse(back.isPresent(1));
    }

    @Test @Spec("§2.4 sparse rows, App. A push/sparse-row-full")
    void encodesTheDerivedSparseRowFullVector() {
        assertEquals(65, SPARSE_ROW_FULL.length);
        boolean[] all = new boolean[9];
        Arrays.fill(all, true);
        assertArrayEquals(SPARSE_ROW_FULL, SparseRowCodec.encode(PUSH, 0, all, sparseRowFullValues()));
        assertArrayEquals(SPARSE_ROW_FULL, SparseRowCodec.encode(PUSH, 0, SparseRow.full(sparseRowFullValues())));
        SparseRow r = SparseRowCodec.decode(PUSH, 0, SPARSE_ROW_FULL);
        assertTrue(r.allPresent());
        assertEquals(9, r.presentCount());
        assertTrue(r.isPresent(1));
        assertNull(r.value(1)); // present NULL
        assertEquals(0.125, r.value(4));
        assertEquals(SparseRow.full(sparseRowFullValues()), r);
    }

    @Test @Spec("§2.4 sparse rows")
    void aPartialRowOverNineColumnsCarriesPaddingInBothBitmaps() {
        // push/sparse-row's shape: id, a present-NULL title, meta — presence 43 00, null bitmap 02 (bit 1 of 3)
        boolean[] present = {true, true, false, false, false, false, true, false, false};
        Object[] values = {"n-1", null, null, null, null, null, "{\"tags\":[\"a\"]}", null, null};
        byte[] b = SparseRowCodec.encode(PUSH, 0, present, values);
        assertEquals("4300" + "02" + "03000000" + utf8("n-1") + "0e000000" + utf8("{\"tags\":[\"a\"]}"), HEX.formatHex(b));
        assertEquals(new SparseRow(present, values), SparseRowCodec.decode(PUSH, 0, b));
    }

    @Test @Spec("WIRE3-DELTA §1.3")
    void anAllPresentRowOfAMultipleOfEightColumnsIsTheFullRowBehindOnesPresence() {
        // the notes table of the 0.15.48 vectors has 8 columns
        byte[] full = RowCodecTest.EXAMPLE;
        byte[] sparse = SparseRowCodec.encode(RowCodecTest.NOTES, 0, SparseRow.full(RowCodecTest.exampleValues()));
        assertArrayEquals(concat(new byte[] {(byte) 0xff}, full), sparse);
        // and with 16 columns: two presence bytes of ones
        List<ColumnDescriptor> sixteen = new ArrayList<>(RowCodecTest.NOTES);
        List<Object> values = new ArrayList<>(Arrays.asList(RowCodecTest.exampleValues()));
        for (int i = 0; i < 8; i++) {
            sixteen.add(new ColumnDescriptor("x" + i, TypeTag.INTEGER, true));
            values.add(i % 3 == 0 ? null : (long) i);
        }
        Object[] v = values.toArray();
        assertArrayEquals(concat(new byte[] {(byte) 0xff, (byte) 0xff}, RowCodec.encode(sixteen, v)),
                SparseRowCodec.encode(sixteen, 0, SparseRow.full(v)));
        // not so with 9 columns: the null bitmap over 9 present columns is 2 bytes, as in the full row, but the
        // presence bitmap's last byte is 01, not ff
        byte[] nine = SparseRowCodec.encode(PUSH, 0, SparseRow.full(sparseRowFullValues()));
        assertArrayEquals(concat(hex("ff01"), RowCodec.encode(PUSH, sparseRowFullValues())), nine);
    }

    // ------------------------------------------------------------------ round trips

    @Test @Spec("§2.4 sparse rows")
    void roundTripsEveryPresenceSubsetThatHoldsThePrimaryKey() {
        Object[] full = sparseRowFullValues();
        for (int mask = 0; mask < 1 << 9; mask++) {
            if ((mask & 1) == 0) continue;
            boolean[] present = new boolean[9];
            Object[] values = new Object[9];
            for (int i = 0; i < 9; i++) {
                present[i] = (mask >>> i & 1) != 0;
                if (present[i]) values[i] = full[i];
            }
            byte[] b = SparseRowCodec.encode(PUSH, 0, present, values);
            SparseRow back = SparseRowCodec.decodeLossless(PUSH, 0, b);
            assertArrayEquals(present, back.present());
            assertArrayEquals(b, SparseRowCodec.encode(PUSH, 0, back), "mask " + mask);
            assertEquals(b[0] & 0xff, mask & 0xff);
            assertEquals(b[1] & 0xff, mask >>> 8);
        }
    }

    @Test @Spec("§2.4")
    void losslessDecodeKeepsNaNBits() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("id", TypeTag.STRING, false),
                new ColumnDescriptor("f", TypeTag.FLOAT, false));
        byte[] b = hex("03" + "00" + "01000000" + utf8("a") + "010000000000f07f");
        SparseRow r = SparseRowCodec.decodeLossless(cols, 0, b);
        assertEquals(new Float64Bits(0x7ff0000000000001L), r.value(1));
        assertArrayEquals(b, SparseRowCodec.encode(cols, 0, r));
    }

    @Test @Spec("§2.4 sparse rows")
    void thePrimaryKeyNeedNotBeTheFirstColumn() {
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor("a", TypeTag.INTEGER, true),
                new ColumnDescriptor("key", TypeTag.STRING, false));
        byte[] b = SparseRowCodec.encode(cols, 1, new boolean[] {false, true}, new Object[] {null, "k"});
        assertEquals("02" + "00" + "01000000" + utf8("k"), HEX.formatHex(b));
        assertInvalid("primary-key column 0 is absent", () -> SparseRowCodec.decode(cols, 0, b));
    }

    // ------------------------------------------------------------------ decode checks, in the spec's order

    @Test @Spec("§2.4 sparse rows check 1; push/invalid/presence-padding-bit")
    void rejectsAPresencePaddingBit() {
        // bit 9 of a 9-column table
        assertInvalid("presence bitmap at offset 0: padding bit set",
                () -> SparseRowCodec.decode(PUSH, 0, hex("0102" + "00" + "03000000" + utf8("n-1"))));
        // before the primary-key check: the PK is absent here too
        assertInvalid("padding bit set", () -> SparseRowCodec.decode(PUSH, 0, hex("0080" + "00")));
    }

    @Test @Spec("§2.4 sparse rows check 2; push/invalid/absent-primary-key")
    void rejectsAnAbsentPrimaryKey() {
        assertInvalid("primary-key column 0 is absent",
                () -> SparseRowCodec.decode(PUSH, 0, hex("0200" + "00" + "01000000" + utf8("t"))));
        // before the null-bitmap checks: its padding bit (a null for an absent column) is set here too
        assertInvalid("primary-key column 0 is absent", () -> SparseRowCodec.decode(PUSH, 0, hex("0200" + "02")));
        // and before a missing null bitmap is noticed
        assertInvalid("primary-key column 0 is absent", () -> SparseRowCodec.decode(PUSH, 0, hex("0200")));
    }

    @Test @Spec("§2.4 sparse rows check 3; push/invalid/null-bit-for-absent-column")
    void rejectsANullForAnAbsentColumn() {
        // only id present (p = 1): null bitmap bit 1 lies in the padding region
        assertInvalid("a null for an absent column",
                () -> SparseRowCodec.decode(PUSH, 0, hex("0100" + "02" + "03000000" + utf8("n-1"))));
        // before the non-nullable check: bit 0 (id, non-nullable) is set too
        assertInvalid("a null for an absent column", () -> SparseRowCodec.decode(PUSH, 0, hex("0100" + "03")));
        // p = 8 present columns: no padding, and the ninth present column would need a second null byte
        boolean[] eight = {true, true, true, true, true, true, true, true, false};
        Object[] v = Arrays.copyOf(sparseRowFullValues(), 9);
        v[8] = null;
        byte[] ok = SparseRowCodec.encode(PUSH, 0, eight, v);
        assertEquals("ff00" + "02", HEX.formatHex(ok, 0, 3));
    }

    @Test @Spec("§2.4 sparse rows check 4; push/invalid/null-bit-on-non-nullable")
    void rejectsANullBitOnANonNullableColumn() {
        assertInvalid("null bit set for non-nullable column 0", () -> SparseRowCodec.decode(PUSH, 0, hex("0100" + "01")));
        // the j-th null bit is the j-th present column: id, body present; bit 1 → body (column 2), non-nullable
        assertInvalid("null bit set for non-nullable column 2",
                () -> SparseRowCodec.decode(PUSH, 0, hex("0500" + "02" + "03000000" + utf8("n-1"))));
        // bit 1 with id, title present → title (column 1), nullable: fine
        SparseRow r = SparseRowCodec.decode(PUSH, 0, hex("0300" + "02" + "03000000" + utf8("n-1")));
        assertTrue(r.isPresent(1));
        assertNull(r.value(1));
        // all four bitmap checks come before any value check: a bad json value after a bad null bit
        assertInvalid("null bit set for non-nullable column 2",
                () -> SparseRowCodec.decode(PUSH, 0, hex("4500" + "02" + "03000000" + utf8("n-1") + "01000000" + utf8("{"))));
    }

    @Test @Spec("§2.4 sparse rows, tag 5")
    void appliesTheRowCodecValueChecks() {
        assertInvalid("json value is not a JSON document",
                () -> SparseRowCodec.decode(PUSH, 0, hex("4100" + "00" + "03000000" + utf8("n-1") + "01000000" + utf8("{"))));
        assertInvalid("bool", () -> SparseRowCodec.decode(PUSH, 0, hex("2100" + "00" + "03000000" + utf8("n-1") + "02")));
        assertInvalid("row column 0", () -> SparseRowCodec.decode(PUSH, 0, hex("0100" + "00" + "02000000" + "c0af")));
    }

    @Test @Spec("§2.4 sparse rows")
    void rejectsTrailingBytesAndEveryTruncation() {
        byte[] longer = Arrays.copyOf(SPARSE_ROW_FULL, SPARSE_ROW_FULL.length + 1);
        assertInvalid("trailing bytes", () -> SparseRowCodec.decode(PUSH, 0, longer));
        for (int n = 0; n < SPARSE_ROW_FULL.length; n++) {
            byte[] shorter = Arrays.copyOf(SPARSE_ROW_FULL, n);
            assertInvalid("needs", () -> SparseRowCodec.decode(PUSH, 0, shorter));
        }
    }

    @Test @Spec("§1.7")
    void decodeErrorsNeverEchoValues() {
        String secret = "SECRET-PHI";
        byte[] b = hex("4100" + "00" + "03000000" + utf8("n-1"));
        byte[] bad = concat(b, concat(hex("0b000000"), ("{" + secret).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        DecodeException e = assertThrows(DecodeException.class, () -> SparseRowCodec.decode(PUSH, 0, bad));
        assertFalse(e.getMessage().contains(secret), e.getMessage());
        SparseRow ok = SparseRowCodec.decode(PUSH, 0, hex("0100" + "00" + "03000000" + utf8("n-1")));
        assertEquals("SparseRow[9 columns, present={0}]", ok.toString());
    }

    // ------------------------------------------------------------------ encode refusals

    @Test @Spec("§2.4 sparse rows")
    void encodeRefusesWhatDecodeWouldReject() {
        Object[] v = sparseRowFullValues();
        boolean[] all = new boolean[9];
        Arrays.fill(all, true);
        boolean[] noPk = all.clone();
        noPk[0] = false;
        Object[] noPkValues = v.clone();
        noPkValues[0] = null;
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 0, noPk, noPkValues));
        Object[] nullBody = v.clone();
        nullBody[2] = null;
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 0, all, nullBody));
        boolean[] noTitle = all.clone();
        noTitle[1] = false;
        Object[] titled = v.clone();
        titled[1] = "t";
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 0, noTitle, titled));
        assertThrows(IllegalArgumentException.class, () -> new SparseRow(noTitle, titled));
        Object[] badScore = v.clone();
        badScore[4] = "0.5";
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 0, all, badScore));
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 0, new boolean[8], new Object[8]));
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.encode(PUSH, 9, all, v));
        assertThrows(IllegalArgumentException.class, () -> SparseRowCodec.decode(PUSH, -1, SPARSE_ROW_FULL));
    }

    @Test
    void sparseRowsAreImmutableValues() {
        boolean[] present = {true, false};
        Object[] values = {new byte[] {1}, null};
        SparseRow r = new SparseRow(present, values);
        present[1] = true;
        values[0] = null;
        assertFalse(r.isPresent(1));
        assertArrayEquals(new byte[] {1}, (byte[]) r.value(0));
        r.present()[0] = false;
        r.values()[0] = null;
        assertTrue(r.isPresent(0));
        assertEquals(new SparseRow(new boolean[] {true, false}, new Object[] {new byte[] {1}, null}), r);
        assertEquals(new SparseRow(new boolean[] {true, false}, new Object[] {new byte[] {1}, null}).hashCode(), r.hashCode());
    }

    // ------------------------------------------------------------------ the column bitmap (conflictColumns)

    @Test @Spec("§6.3 @008c36d5, §2.4")
    void columnBitmapsUseThePresenceLayout() {
        assertArrayEquals(new byte[] {0x02}, ColumnBitmap.ofIndexes(8, 1)); // push-conflict: bit 1 = title
        assertArrayEquals(new byte[] {0x02}, ColumnBitmap.ofNames(RowCodecTest.NOTES, List.of("title")));
        assertArrayEquals(new byte[] {0x00, 0x01}, ColumnBitmap.ofIndexes(9, 8));
        assertArrayEquals(new byte[] {(byte) 0x81, 0x01}, ColumnBitmap.ofIndexes(9, 8, 7, 0, 7));
        assertArrayEquals(new byte[] {(byte) 0x81, 0x01},
                ColumnBitmap.of(9, new boolean[] {true, false, false, false, false, false, false, true, true}));
        assertArrayEquals(new byte[0], ColumnBitmap.ofIndexes(0));
        assertArrayEquals(new int[] {0, 7, 8}, ColumnBitmap.indexes(9, new byte[] {(byte) 0x81, 0x01}));
        assertArrayEquals(new int[] {1}, ColumnBitmap.indexes(8, new byte[] {0x02}));
        assertTrue(ColumnBitmap.isSet(new byte[] {0, 1}, 8));
        assertEquals(2, ColumnBitmap.byteLength(9));
        assertEquals(1, ColumnBitmap.byteLength(8));
        assertThrows(IllegalArgumentException.class, () -> ColumnBitmap.ofIndexes(8, 8));
        assertThrows(IllegalArgumentException.class, () -> ColumnBitmap.ofIndexes(8, -1));
        assertThrows(IllegalArgumentException.class, () -> ColumnBitmap.of(8, new boolean[9]));
        assertThrows(IllegalArgumentException.class, () -> ColumnBitmap.ofNames(RowCodecTest.NOTES, List.of("nope")));
        assertInvalid("padding bit set", () -> ColumnBitmap.indexes(9, new byte[] {0, 0x02}));
        assertInvalid("2 expected", () -> ColumnBitmap.indexes(9, new byte[] {0}));
        assertInvalid("1 expected", () -> ColumnBitmap.indexes(8, new byte[] {0, 0}));
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}

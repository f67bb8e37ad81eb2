package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The derived wire-3 request/response bytes ({@link Wire3Vectors}) against the lengths and sha256 prefixes of
 * WIRE3-DELTA §9, which were computed independently from the wire-3 JSON renderings @fe4fc1e2; and the
 * 223-byte push-conflict layout of §1.4 piece by piece.
 */
class Wire3VectorTest {
    /** WIRE3-DELTA §9: case → {0.15.48 length, wire-3 length, sha256[0:16] of the wire-3 bytes}. */
    static final Map<String, Object[]> PINNED = new LinkedHashMap<>();
    static {
        PINNED.put("request/pull-minimal", new Object[] {114, 115, "c969ab18fbc982e9"});
        PINNED.put("request/pull-bootstrap", new Object[] {324, 325, "6ccc44d1037ff342"});
        PINNED.put("request/push-multi-commit", new Object[] {295, 298, "d1680c3381cc9ddc"});
        PINNED.put("request/combined", new Object[] {226, 228, "3f0e809ccf6f3b2e"});
        PINNED.put("request/epoch-bound", new Object[] {137, 137, "f16db9f45fad2507"});
        PINNED.put("response/push-conflict", new Object[] {194, 223, "f89829bcbd0e21b9"});
        PINNED.put("response/push-applied", new Object[] {59, 82, "209994c29adfe184"});
        PINNED.put("response/push-cached", new Object[] {59, 82, "5298ded97c98e5c3"});
        PINNED.put("response/epoch-reset", new Object[] {43, 43, "911bab4bf95831b6"});
    }

    static String sha256Prefix(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static byte[] vector(String kindSlashName) {
        return Vectors.bytes(Vectors.root().resolve(kindSlashName + ".bin"));
    }

    @TestFactory @Spec("WIRE3-DELTA §9")
    List<DynamicTest> derivedWireThreeBytesMatchTheDeltasLengthsAndHashes() {
        List<DynamicTest> out = new ArrayList<>();
        for (Map.Entry<String, Object[]> e : PINNED.entrySet()) {
            out.add(DynamicTest.dynamicTest(e.getKey(), () -> {
                String kind = e.getKey().substring(0, e.getKey().indexOf('/'));
                byte[] old = vector(e.getKey());
                assertEquals(e.getValue()[0], old.length, "0.15.48 length");
                byte[] w3 = Wire3Vectors.derive(kind, old);
                assertEquals(e.getValue()[1], w3.length, "wire-3 length");
                assertEquals(e.getValue()[2], sha256Prefix(w3), "wire-3 sha256 prefix");
                assertEquals(3, Envelope.readHeader(w3).wireVersion());
                // the derived bytes are themselves canonical wire 3
                assertArrayEquals(w3, Vectors.encode(Vectors.decode(kind, w3)));
            }));
        }
        return out;
    }

    @TestFactory @Spec("WIRE3-DELTA §9")
    List<DynamicTest> everyOtherWireOneResponseGrowsByTheWireTwoHeaderFields() {
        List<DynamicTest> out = new ArrayList<>();
        for (Vectors.Binary v : Vectors.validBinaries()) {
            String id = v.kind() + "/" + v.name();
            if (!v.kind().equals("response") || PINNED.containsKey(id)) continue;
            out.add(DynamicTest.dynamicTest(id, () -> {
                assertEquals(1, Envelope.readHeader(v.bytes()).wireVersion(), "a wire-1 fixture");
                byte[] w3 = Wire3Vectors.derive("response", v.bytes());
                // str logEpoch (4 + 18) + bool resetRequired
                assertEquals(v.bytes().length + 23, w3.length);
                ResponseMessage m = ResponseDecoder.decode(w3);
                assertEquals(RespHeader.class, m.frames().get(0).getClass());
                assertEquals(Wire3Vectors.EPOCH, ((RespHeader) m.frames().get(0)).logEpoch());
                // everything after RESP_HEADER is byte-identical to 0.15.48
                int oldAfter = 8 + 5 + frameLength(v.bytes(), 8);
                int newAfter = 8 + 5 + frameLength(w3, 8);
                assertArrayEquals(java.util.Arrays.copyOfRange(v.bytes(), oldAfter, v.bytes().length),
                        java.util.Arrays.copyOfRange(w3, newAfter, w3.length));
            }));
        }
        assertEquals(10, out.size(), "WIRE3-DELTA §9: ten other responses");
        return out;
    }

    static int frameLength(byte[] b, int frameAt) {
        return (b[frameAt + 1] & 0xff) | (b[frameAt + 2] & 0xff) << 8 | (b[frameAt + 3] & 0xff) << 16 | (b[frameAt + 4] & 0xff) << 24;
    }

    @Test @Spec("WIRE3-DELTA §1.4")
    void pushConflictHasTheDeltasLayout() {
        byte[] b = Wire3Vectors.derive("response", vector("response/push-conflict"));
        HexFormat hex = HexFormat.of();
        String h = hex.formatHex(b);
        int at = 0;
        at = expect(h, at, "5353503203000200");                                                 // SSP2, wire 3, response
        at = expect(h, at, "10" + "19000000");                                                   // RESP_HEADER len 25
        at = expect(h, at, "00" + "00" + "12000000" + RowCodecTest.hex("epoch-2026-07-02-a") + "00");
        at = expect(h, at, "11" + "af000000");                                                   // PUSH_RESULT len 175
        at = expect(h, at, "06000000" + RowCodecTest.hex("c-0002") + "03" + "00" + "01000000"); // rejected, 1 record
        at = expect(h, at, "00000000" + "02");                                                   // opIndex 0, conflict
        at = expect(h, at, "15000000" + RowCodecTest.hex("sync.version_conflict"));
        at = expect(h, at, "2e000000" + RowCodecTest.hex("present columns moved past baseVersion (§6.2)"));
        at = expect(h, at, "0700000000000000");                                                  // serverVersion 7
        at = expect(h, at, "3e000000" + hex.formatHex(RowCodecTest.EXAMPLE));                   // the 62-byte full row
        at = expect(h, at, "01000000" + "02");                                                   // conflictColumns
        at = expect(h, at, "00" + "00000000");                                                   // END
        assertEquals(h.length(), at);
        assertEquals(223, b.length);
        assertEquals(46, "present columns moved past baseVersion (§6.2)".getBytes(StandardCharsets.UTF_8).length);
        // and its rendering carries the bitmap as base64
        Map<String, Object> c = WireJsonWire3Test.conflictRecord(WireJson.render(ResponseDecoder.decode(b)));
        assertEquals("Ag==", c.get("conflictColumns"));
        assertArrayEquals(new int[] {1}, ColumnBitmap.indexes(RowCodecTest.NOTES.size(),
                java.util.Base64.getDecoder().decode((String) c.get("conflictColumns"))));
    }

    private static int expect(String hex, int at, String piece) {
        assertTrue(hex.startsWith(piece, at), () -> "at byte " + at / 2 + ": expected " + piece + ", got "
                + hex.substring(at, Math.min(hex.length(), at + piece.length())));
        return at + piece.length();
    }

    @Test @Spec("WIRE3-DELTA §1.2")
    void pullMinimalGainsOnlyTheVersionAndOneAbsentEpochByte() {
        byte[] old = vector("request/pull-minimal");
        byte[] w3 = Wire3Vectors.derive("request", old);
        String h = HexFormat.of().formatHex(w3);
        assertTrue(h.startsWith("5353503203000100" + "01" + "11000000" + "08000000" + RowCodecTest.hex("client-a")
                + "01000000" + "00" + "03" + "0d000000"), h);
        assertNull(RequestDecoder.decode(w3).header().logEpoch());
    }

    @Test @Spec("WIRE3-DELTA §1.3")
    void pushMultiCommitPayloadsAreTheFullRowsBehindOnesPresence() {
        RequestMessage old = RequestDecoder.decode(vector("request/push-multi-commit"));
        RequestMessage w3 = RequestDecoder.decode(Wire3Vectors.derive("request", vector("request/push-multi-commit")));
        List<byte[]> before = new ArrayList<>();
        List<byte[]> after = new ArrayList<>();
        for (PushCommit p : old.pushCommits()) for (PushCommit.Operation o : p.operations()) if (o.payload() != null) before.add(o.payload());
        for (PushCommit p : w3.pushCommits()) for (PushCommit.Operation o : p.operations()) if (o.payload() != null) after.add(o.payload());
        assertEquals(2, before.size());
        assertEquals(List.of(88, 62), List.of(before.get(0).length, before.get(1).length));
        for (int i = 0; i < 2; i++) {
            assertArrayEquals(SparseRowCodecTest.concat(new byte[] {(byte) 0xff}, before.get(i)), after.get(i));
            SparseRow r = SparseRowCodec.decodeLossless(RowCodecTest.NOTES, 0, after.get(i));
            assertTrue(r.allPresent());
            assertArrayEquals(before.get(i), RowCodec.encode(RowCodecTest.NOTES, r.values()));
        }
    }
}

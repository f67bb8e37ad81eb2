package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** jqwik properties: random valid messages and segments round-trip byte for byte and render identically. */
class WirePropertiesTest {
    @Property(tries = 400)
    void requestsRoundTrip(@ForAll long seed) {
        RequestMessage m = new RandomWire(seed).request();
        byte[] bytes = RequestEncoder.encode(m);
        RequestMessage back = RequestDecoder.decode(bytes);
        assertArrayEquals(bytes, RequestEncoder.encode(back));
        assertEquals(Json.write(WireJson.render(m)), Json.write(WireJson.render(back)));
    }

    @Property(tries = 400)
    void responsesRoundTrip(@ForAll long seed) {
        ResponseMessage m = new RandomWire(seed).response();
        byte[] bytes = ResponseEncoder.encode(m);
        ResponseMessage back = ResponseDecoder.decode(bytes);
        assertArrayEquals(bytes, ResponseEncoder.encode(back));
        assertEquals(Json.write(WireJson.render(m)), Json.write(WireJson.render(back)));
    }

    @Property(tries = 400)
    void segmentsRoundTrip(@ForAll long seed) {
        RowsSegment s = new RandomWire(seed).segment(20);
        byte[] bytes = RowsSegmentEncoder.encode(s);
        RowsSegment back = RowsSegmentDecoder.decode(bytes, true);
        assertArrayEquals(bytes, RowsSegmentEncoder.encode(back));
        assertEquals(Json.write(WireJson.render(s)), Json.write(WireJson.render(back)));
    }

    @Property(tries = 400)
    void rowsRoundTripLosslessly(@ForAll long seed) {
        RandomWire g = new RandomWire(seed);
        java.util.List<ColumnDescriptor> cols = g.columns();
        Object[] v = new Object[cols.size()];
        for (int i = 0; i < v.length; i++) v[i] = g.value(cols.get(i));
        byte[] row = RowCodec.encode(cols, v);
        assertArrayEquals(row, RowCodec.encode(cols, RowCodec.decodeLossless(cols, row)));
    }

    @Property(tries = 400)
    void sparseRowsRoundTripLosslessly(@ForAll long seed) {
        RandomWire g = new RandomWire(seed);
        java.util.List<ColumnDescriptor> cols = g.columns(1);
        int pk = g.nextInt(cols.size());
        SparseRow row = g.sparseRow(cols, pk);
        byte[] bytes = SparseRowCodec.encode(cols, pk, row);
        SparseRow back = SparseRowCodec.decodeLossless(cols, pk, bytes);
        assertEquals(row, back);
        assertArrayEquals(bytes, SparseRowCodec.encode(cols, pk, back));
        if (row.allPresent() && cols.size() % 8 == 0) {
            // WIRE3-DELTA §1.3: then the sparse bytes are the full row behind an all-ones presence bitmap
            byte[] full = RowCodec.encode(cols, row.values());
            byte[] ones = new byte[cols.size() / 8];
            java.util.Arrays.fill(ones, (byte) 0xff);
            assertArrayEquals(SparseRowCodecTest.concat(ones, full), bytes);
        }
    }

    @Property(tries = 200)
    void scopeDigestIgnoresOrderAndDuplicates(@ForAll long seed) {
        RandomWire g = new RandomWire(seed);
        java.util.Map<String, java.util.List<String>> m = g.scopes();
        java.util.Map<String, java.util.List<String>> shuffled = new java.util.LinkedHashMap<>();
        java.util.List<String> keys = new java.util.ArrayList<>(m.keySet());
        java.util.Collections.reverse(keys);
        for (String k : keys) {
            java.util.List<String> l = new java.util.ArrayList<>(m.get(k));
            l.addAll(m.get(k));
            java.util.Collections.reverse(l);
            shuffled.put(k, l);
        }
        assertEquals(CanonicalJson.scopeDigest(m), CanonicalJson.scopeDigest(shuffled));
        assertEquals(m.isEmpty() ? java.util.Map.of() : Json.parse(CanonicalJson.scopes(m)).getClass(),
                m.isEmpty() ? java.util.Map.of() : java.util.LinkedHashMap.class);
    }
}

package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The §11.1 debug rendering of what wire 3 adds (SPEC @008c36d5 §11.1 rules 4 and 11). */
class WireJsonWire3Test {
    @SuppressWarnings("unchecked")
    static Map<String, Object> conflictRecord(Map<String, Object> rendered) {
        List<Object> frames = (List<Object>) rendered.get("frames");
        Map<String, Object> result = (Map<String, Object>) frames.get(1);
        return (Map<String, Object>) ((List<Object>) result.get("results")).get(0);
    }

    @Test @Spec("§11.1 rule 4 @008c36d5, §6.3")
    void aWireThreeConflictRendersConflictColumnsAsBase64AfterServerRow() {
        Map<String, Object> rendered = WireJson.render(EnvelopeTest.conflictResponse(3, new byte[] {0x02}));
        assertEquals(3, rendered.get("wireVersion"));
        Map<String, Object> c = conflictRecord(rendered);
        assertEquals(List.of("opIndex", "status", "code", "message", "serverVersion", "serverRow", "conflictColumns"),
                new ArrayList<>(c.keySet()));
        assertEquals("Ag==", c.get("conflictColumns"));
        // and it survives a trip through the bytes
        byte[] b = ResponseEncoder.encode(EnvelopeTest.conflictResponse(3, new byte[] {0x02}));
        assertEquals(Json.write(rendered), Json.write(WireJson.render(ResponseDecoder.decode(b))));
    }

    @Test @Spec("§11.1")
    void wireOneAndTwoRenderNoConflictColumnsWhateverTheRecordHolds() {
        for (int v : new int[] {1, 2}) {
            Map<String, Object> c = conflictRecord(WireJson.render(EnvelopeTest.conflictResponse(v, new byte[] {0x02})));
            assertFalse(c.containsKey("conflictColumns"), "wire " + v);
            assertEquals("AAEAAABh", c.get("serverRow"));
        }
        // a frame rendered on its own shows what it holds
        PushResult.Conflict held = new PushResult.Conflict(0, "c", "m", 1, new byte[0], new byte[] {0x01, 0x01});
        @SuppressWarnings("unchecked")
        Map<String, Object> alone = (Map<String, Object>) ((List<Object>) WireJson.frame(
                new PushResult("x", PushResult.Status.REJECTED, null, List.of(held))).get("results")).get(0);
        assertEquals("AQE=", alone.get("conflictColumns"));
    }

    @Test @Spec("§11.1 rule 11 @008c36d5; push/sparse-row-full")
    @SuppressWarnings("unchecked")
    void aFullSparseRowRendersEveryColumnAndEveryValue() {
        SparseRow row = SparseRowCodec.decode(SparseRowCodecTest.PUSH, 0, SparseRowCodecTest.SPARSE_ROW_FULL);
        Map<String, Object> r = (Map<String, Object>) Json.parse(Json.write(WireJson.renderSparseRow(SparseRowCodecTest.PUSH, row)));
        assertEquals(List.of("columns", "values"), new ArrayList<>(r.keySet()));
        List<Object> cols = (List<Object>) r.get("columns");
        assertEquals(9, cols.size());
        assertEquals(Map.of("name", "id", "type", "string", "nullable", false), cols.get(0));
        assertEquals(List.of("name", "type", "nullable"), new ArrayList<>(((Map<String, Object>) cols.get(0)).keySet()));
        assertEquals(Map.of("name", "doc", "type", "crdt", "nullable", true), cols.get(8));
        Map<String, Object> values = (Map<String, Object>) r.get("values");
        assertEquals(List.of("id", "title", "body", "count", "score", "done", "meta", "blob", "doc"),
                new ArrayList<>(values.keySet()));
        assertEquals("n-2", values.get("id"));
        assertTrue(values.containsKey("title"));
        assertNull(values.get("title"));
        assertEquals("body", values.get("body"));
        assertEquals(-7L, ((Number) values.get("count")).longValue());
        assertEquals(0.125, ((Number) values.get("score")).doubleValue());
        assertEquals(false, values.get("done"));
        assertEquals(Map.of("k", true), values.get("meta")); // json renders parsed (rule 7)
        assertEquals("AAH+/w==", values.get("blob"));
        assertEquals("AQL+", values.get("doc"));
    }

    @Test @Spec("§11.1 rule 11 @008c36d5; push/sparse-row")
    @SuppressWarnings("unchecked")
    void aPartialSparseRowRendersOnlyThePresentValues() {
        boolean[] present = {true, true, false, false, false, false, true, false, false};
        Object[] values = {"n-1", null, null, null, null, null, "{\"tags\":[\"a\"]}", null, null};
        Map<String, Object> r = WireJson.renderSparseRow(SparseRowCodecTest.PUSH, new SparseRow(present, values));
        assertEquals(9, ((List<Object>) r.get("columns")).size()); // the table, not the present subset
        Map<String, Object> v = (Map<String, Object>) r.get("values");
        assertEquals(List.of("id", "title", "meta"), new ArrayList<>(v.keySet()));
        assertNull(v.get("title")); // a present NULL
        assertFalse(v.containsKey("body")); // absent: no key
        assertEquals(Map.of("tags", List.of("a")), v.get("meta"));
        assertEquals("{\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}],\"values\":{\"id\":\"k\"}}",
                Json.write(WireJson.renderSparseRow(List.of(SparseRowCodecTest.PUSH.get(0)),
                        new SparseRow(new boolean[] {true}, new Object[] {"k"}))));
        assertThrows(IllegalArgumentException.class, () -> WireJson.renderSparseRow(RowCodecTest.NOTES,
                new SparseRow(present, values)));
    }
}

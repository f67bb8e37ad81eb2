package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** PUSH_RESULT_DETAILS limits and normalization (SPEC §6.3.1). */
class RejectionDetailsTest {
    static RejectionDetails parse(String json) { return RejectionDetails.fromJsonValue(Json.parse(json)); }

    @Test @Spec("§6.3.1")
    void normalizesMemberOrderAndReferenceKeys() {
        RejectionDetails d = parse("{\"references\":{\"z\":\"1\",\"a\":\"2\"},\"requiredAction\":\"edit-fields\",\"reason\":\"outside_day\"}");
        assertEquals("{\"reason\":\"outside_day\",\"requiredAction\":\"edit-fields\",\"references\":{\"a\":\"2\",\"z\":\"1\"}}", d.toJson());
    }

    @Test @Spec("§6.3.1")
    void refusesEverythingOutsideTheLimits() {
        List<String> bad = new ArrayList<>(List.of(
                "{}", "[]", "{\"other\":1}", "{\"reason\":null}", "{\"reason\":\"Upper\"}", "{\"reason\":\"a--b\"}",
                "{\"reason\":\"" + "a".repeat(97) + "\"}", "{\"fieldPaths\":[]}", "{\"fieldPaths\":[\"a\",\"a\"]}",
                "{\"fieldPaths\":[\"1a\"]}", "{\"fieldPaths\":[\"a.\"]}", "{\"references\":{}}",
                "{\"references\":{\"k\":\" padded\"}}", "{\"references\":{\"k\":\"\"}}", "{\"references\":{\"k\":\"a\\u0085\"}}",
                "{\"references\":{\"K\":\"v\"}}", "{\"references\":{\"k\":\"" + "é".repeat(129) + "\"}}",
                "{\"references\":{\"k\":\"\\u00a0x\"}}"));
        StringBuilder paths = new StringBuilder("{\"fieldPaths\":[");
        for (int i = 0; i < 33; i++) paths.append(i == 0 ? "" : ",").append("\"p").append(i).append('"');
        bad.add(paths.append("]}").toString());
        for (String json : bad) assertThrows(IllegalArgumentException.class, () -> parse(json), json);
        // 32 paths of 160 characters: ≈ 5.3 KB encoded, over the 4096-byte cap
        List<String> longPaths = new ArrayList<>();
        for (int i = 0; i < 32; i++) longPaths.add("p" + String.format("%03d", i) + "x".repeat(156));
        assertThrows(IllegalArgumentException.class, () -> new RejectionDetails(longPaths, null, null, null));
        assertEquals(256, "é".repeat(128).getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        parse("{\"references\":{\"k\":\"" + "é".repeat(128) + "\"}}");
        new RejectionDetails(null, null, null, Map.of("k", "v"));
    }
}

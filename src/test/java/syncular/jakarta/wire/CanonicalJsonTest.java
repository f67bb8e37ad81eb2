package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Canonical JSON and the scope digest (SPEC §3.5, §11.2) with JavaScript JSON.stringify escaping (SPEC-DIGEST §17). */
class CanonicalJsonTest {
    @Test @Spec("§3.5")
    void digestOfTheSpecExample() {
        assertEquals("5a993aa4d503af6f5dc77acc12ad399ff2e9d933c393f4de6af5f6aef4fa2977",
                CanonicalJson.scopeDigest(Map.of("project", List.of("p1"))));
    }

    @Test @Spec("§11.2")
    void sortsKeysAndValuesByUtf16AndDeduplicates() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("team", List.of("t2", "t1", "t2"));
        m.put("\uFF21", List.of("\uFF21", "\uD83D\uDE00"));
        m.put("project", List.of());
        assertEquals("{\"project\":[],\"team\":[\"t1\",\"t2\"],\"\uFF21\":[\"\uD83D\uDE00\",\"\uFF21\"]}", CanonicalJson.scopes(m));
    }

    @Test @Spec("§11.2, SPEC-DIGEST §17")
    void escapesLikeJsonStringify() {
        Map<String, List<String>> m = Map.of("k", List.of("a\"b\\c\u0001\u001f\b\f\n\r\t\u007f/é\uD800"));
        assertEquals("{\"k\":[\"a\\\"b\\\\c\\u0001\\u001f\\b\\f\\n\\r\\t\u007f/é\\ud800\"]}", CanonicalJson.scopes(m));
    }

    @Test @Spec("§5.5")
    void parsesAScopeHeaderAndRefusesOtherShapes() {
        Map<String, List<String>> m = CanonicalJson.parseScopes("{\"project\":[\"p1\"]}");
        assertEquals(Map.of("project", List.of("p1")), m);
        assertEquals("5a993aa4d503af6f5dc77acc12ad399ff2e9d933c393f4de6af5f6aef4fa2977", CanonicalJson.scopeDigest(m));
        for (String bad : new String[] {"", "[]", "{\"a\":\"p1\"}", "{\"a\":[1]}", "{\"a\":[null]}"}) {
            DecodeException e = org.junit.jupiter.api.Assertions.assertThrows(DecodeException.class, () -> CanonicalJson.parseScopes(bad));
            assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code());
        }
    }
}

package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * One dynamic test per case of every {@code vectors/<kind>/manifest.json} (SPEC App. A, STYLE §6.12): a valid binary
 * case decodes, renders deep-equal to its {@code .json} (numbers by value) and re-encodes byte-identical; a valid
 * realtime case parses, validates and re-renders deep-equal; an invalid case fails with the manifest's code. A last
 * test fails if any listed case did not run.
 */
class GoldenVectorTest {
    private final Set<String> listed = new LinkedHashSet<>();
    private final Set<String> ran = ConcurrentHashMap.newKeySet();

    @TestFactory
    List<DynamicNode> everyManifestCase() {
        List<DynamicNode> out = new ArrayList<>();
        int valid = 0;
        int invalid = 0;
        for (Path manifestPath : Vectors.manifests()) {
            Map<?, ?> manifest = (Map<?, ?>) Json.parse(Vectors.read(manifestPath));
            String kind = (String) manifest.get("kind");
            Path dir = manifestPath.getParent();
            List<DynamicNode> cases = new ArrayList<>();
            for (Object o : (List<?>) manifest.get("cases")) {
                Map<?, ?> c = (Map<?, ?>) o;
                String id = kind + "/" + c.get("name");
                listed.add(id);
                valid++;
                cases.add(DynamicTest.dynamicTest("valid " + c.get("name"), () -> {
                    runValid(kind, dir, c);
                    ran.add(id);
                }));
            }
            Object inv = manifest.get("invalid");
            for (Object o : inv == null ? List.of() : (List<?>) inv) {
                Map<?, ?> c = (Map<?, ?>) o;
                String id = kind + "/invalid/" + c.get("name");
                listed.add(id);
                invalid++;
                cases.add(DynamicTest.dynamicTest("invalid " + c.get("name"), () -> {
                    runInvalid(kind, dir, c);
                    ran.add(id);
                }));
            }
            out.add(DynamicContainer.dynamicContainer(kind, cases));
        }
        int validCount = valid;
        int invalidCount = invalid;
        out.add(DynamicTest.dynamicTest("every listed case ran", () -> {
            // at least the 25 valid and 16 invalid cases of release 0.15.48; more is fine, fewer means a lost vector dir
            assertTrue(validCount >= 25, () -> "only " + validCount + " valid cases listed");
            assertTrue(invalidCount >= 16, () -> "only " + invalidCount + " invalid cases listed");
            Set<String> missing = new LinkedHashSet<>(listed);
            missing.removeAll(ran);
            assertTrue(missing.isEmpty(), () -> "listed but not run (or failed): " + missing);
        }));
        return out;
    }

    private static void runValid(String kind, Path dir, Map<?, ?> c) {
        Object expected = Json.parse(Vectors.read(dir.resolve((String) c.get("json"))));
        if ("realtime".equals(kind)) {
            String text = Vectors.read(dir.resolve((String) c.get("json")));
            Optional<RealtimeControl.Message> m = RealtimeControl.parse(text);
            assertTrue(m.isPresent(), "a known control message");
            assertNull(Vectors.diff(expected, Json.parse(m.get().toJson()), "$"));
            return;
        }
        byte[] bytes = Vectors.bytes(dir.resolve((String) c.get("bin")));
        Object decoded = Vectors.decode(kind, bytes);
        Object rendered = Json.parse(Json.write(Vectors.render(decoded)));
        assertNull(Vectors.diff(expected, rendered, "$"));
        assertArrayEquals(bytes, Vectors.encode(decoded), "re-encode must be byte-identical");
    }

    private static void runInvalid(String kind, Path dir, Map<?, ?> c) {
        String code = (String) c.get("error");
        DecodeException e;
        if ("realtime".equals(kind)) {
            String text = Vectors.read(dir.resolve((String) c.get("json")));
            e = assertThrows(DecodeException.class, () -> RealtimeControl.parse(text));
        } else {
            byte[] bytes = Vectors.bytes(dir.resolve((String) c.get("bin")));
            e = assertThrows(DecodeException.class, () -> Vectors.decode(kind, bytes));
        }
        assertEquals(code, e.code().wire(), e.getMessage());
    }

}

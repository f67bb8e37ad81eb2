package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** The wire's {@code json} check (SPEC Conventions): {@link Json#isValid} must agree with the parser on every text. */
class JsonValidationTest {
    private static final String[] SEEDS = {"{\"a\":[1,-2.5e+3,true,false,null,\"x\\u00e9\\n\"],\"b\":{}}", "[]", " 7 ",
            "\"s\"", "-0", "0.5E-2", "{\"k\":{\"k\":[[],[{}]]}}", "null"};
    private static final String ATOMS = "{}[]\",:.-+eE0123456789 \\\tutrfalsn\u00e9\u0001";

    @Property(tries = 2000)
    void validatorAgreesWithParser(@ForAll long seed) {
        Random r = new Random(seed);
        StringBuilder sb = new StringBuilder(SEEDS[r.nextInt(SEEDS.length)]);
        int edits = r.nextInt(4);
        for (int k = 0; k < edits && sb.length() > 0; k++) {
            int at = r.nextInt(sb.length());
            switch (r.nextInt(3)) {
                case 0: sb.deleteCharAt(at); break;
                case 1: sb.insert(at, ATOMS.charAt(r.nextInt(ATOMS.length()))); break;
                default: sb.setCharAt(at, ATOMS.charAt(r.nextInt(ATOMS.length())));
            }
        }
        String text = sb.toString();
        boolean parses;
        try {
            Json.parse(text);
            parses = true;
        } catch (Json.JsonException e) {
            parses = false;
        }
        assertEquals(parses, Json.isValid(text), text);
    }
}

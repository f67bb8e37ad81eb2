package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Edge cases of the wire's {@code json} validity check (SPEC Conventions {@code json}). */
class JsonTest {
    @Test @Spec("Conventions: json")
    void acceptsScalarsAndDeepNestingRejectsTrailingTokens() {
        assertTrue(Json.isValid("true"));
        assertTrue(Json.isValid("[".repeat(5000) + "]".repeat(5000)));
        assertTrue(Json.isValid("1e99999999999"));
        assertFalse(Json.isValid("1 2"));
        assertFalse(Json.isValid(""));
        assertFalse(Json.isValid("{\"a\":1,}"));
        assertFalse(Json.isValid("01"));
        assertFalse(Json.isValid("\"\\u\u0660\u0660\u0660\u0660\"")); // non-ASCII digits are not hex digits
        assertFalse(Json.isValid("\"\t\""));
    }
}

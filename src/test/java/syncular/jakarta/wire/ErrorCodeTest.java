package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The catalog rows the wire-3 spec adds (SPEC @008c36d5 §10.2), and the catalog's own invariants. */
class ErrorCodeTest {
    @Test @Spec("§10.2 @008c36d5")
    void rowDeletedIsANotFoundPushRecordCodeTheClientDrops() {
        ErrorCode c = ErrorCode.forWire("sync.row_deleted").orElseThrow();
        assertEquals(ErrorCode.SYNC_ROW_DELETED, c);
        assertEquals("not-found", c.category().wire());
        assertFalse(c.retryable());
        assertEquals("fixRequest", c.action().wire());
        assertEquals(404, c.httpStatus());
    }

    @Test @Spec("§10.2 @008c36d5, §6.11")
    void referenceViolationIsAnInvalidRequestPushRecordCode() {
        ErrorCode c = ErrorCode.forWire("sync.reference_violation").orElseThrow();
        assertEquals(ErrorCode.SYNC_REFERENCE_VIOLATION, c);
        assertEquals("invalid-request", c.category().wire());
        assertFalse(c.retryable());
        assertEquals("fixRequest", c.action().wire());
        assertEquals(400, c.httpStatus());
    }

    @Test @Spec("§10.1")
    void everyWireCodeIsUniqueAndFindable() {
        Set<String> seen = new HashSet<>();
        for (ErrorCode c : ErrorCode.values()) {
            assertTrue(seen.add(c.wire()), () -> "duplicate wire code " + c.wire());
            assertEquals(c, ErrorCode.forWire(c.wire()).orElseThrow());
            // the HTTP status agrees with the category's broad class
            if (c.category() == ErrorCode.Category.NOT_FOUND) assertEquals(404, c.httpStatus(), c.wire());
        }
        // still served: a wire-1 client after an epoch rotation needs it, although the wire-3 catalog drops it
        assertTrue(ErrorCode.forWire("sync.client_wire_unsupported").isPresent());
    }
}

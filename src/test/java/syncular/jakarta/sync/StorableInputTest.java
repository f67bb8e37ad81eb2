package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;

/** The request-level half of issue 13 item 3, and the jsonb rule, without a database. */
class StorableInputTest {
    private static RequestMessage request(String clientId, String commitId, Subscription sub) {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1));
        if (commitId != null) {
            frames.add(new PushCommit(commitId, List.of(PushCommit.Operation.delete("t", "r", null))));
        }
        if (sub != null) {
            frames.add(new PullHeader(0, 0, 0, 3));
            frames.add(sub);
        }
        return new RequestMessage(2, frames);
    }

    private static Subscription sub(String id, Map<String, List<String>> scopes, String token) {
        return new Subscription(id, "t", scopes, null, -1, token);
    }

    private static void assertRefused(RequestMessage r, String field) {
        SyncException e = assertThrows(SyncException.class, () -> StorableInput.checkRequest(r));
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, e.code());
        assertTrue(e.getMessage().startsWith(field + " "), e.getMessage());
        assertTrue(e.detailsJson().contains("\"field\":\"" + field + "\""), e.detailsJson());
    }

    @Test
    void requestFieldsTheDatabaseCannotStoreAreRefusedByName() {
        String big = "x".repeat(StorableInput.MAX_KEY_BYTES + 1);
        assertRefused(request("c\0", null, null), "clientId");
        assertRefused(request(big, null, null), "clientId");
        assertRefused(request("c", "id\0", null), "clientCommitId");
        assertRefused(request("c", big, null), "clientCommitId");
        assertRefused(request("c", null, sub("s\0", Map.of(), null)), "subscription.id");
        assertRefused(request("c", null, sub("s", Map.of("k", List.of("v\0")), null)), "subscription.scopes");
        assertRefused(request("c", null, sub("s", Map.of("k\0", List.of("v")), null)), "subscription.scopes");
        assertRefused(request("c", null, sub("s", Map.of("k", List.of(big)), null)), "subscription.scopes");
        assertRefused(request("c", null, sub("s", Map.of(), "{\"rowCursor\":\"a\\u0000\"}")),
                "subscription.bootstrapState");
    }

    @Test
    void ordinaryRequestsPass() {
        String atCap = "é".repeat(StorableInput.MAX_KEY_BYTES / 2);   // 2 bytes each: exactly the cap
        StorableInput.checkRequest(request(atCap, atCap, sub("s", Map.of("k", List.of(atCap)),
                "{\"rowCursor\":\"a\\\\u0000\"}")));   // an escaped backslash, not a NUL
    }

    @Test
    void theJsonRuleFollowsWhatJsonbHolds() {
        assertNull(StorableInput.jsonProblem("{\"a\":[1,-2.5e10,0e99999,1e131071,\"[[[\\\"\"]}"));
        assertEquals("json_number_out_of_range", StorableInput.jsonProblem("1e131072"));
        assertEquals("json_number_out_of_range", StorableInput.jsonProblem("[1e-16384]"));
        assertNull(StorableInput.jsonProblem("[1e-16383]"));
        assertEquals("json_number_out_of_range", StorableInput.jsonProblem("1E+9999999999999999999"));
        assertEquals("json_number_out_of_range", StorableInput.jsonProblem("0e9999999999"));
        assertEquals("json_too_deep", StorableInput.jsonProblem("[".repeat(513) + "]".repeat(513)));
        assertNull(StorableInput.jsonProblem("[".repeat(512) + "]".repeat(512)));
    }
}

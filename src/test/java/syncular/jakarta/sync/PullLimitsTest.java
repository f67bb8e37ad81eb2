package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.PullHeader;

class PullLimitsTest {
    @Test
    void zeroMeansDefaultAndOtherValuesAreSilentlyClamped() {
        assertEquals(new PullLimits(1000, 1000, 4, 3), PullLimits.clamp(new PullHeader(0, 0, 0, 3)));
        assertEquals(new PullLimits(1, 1, 1, 1), PullLimits.clamp(new PullHeader(-5, -1, -9, 1)));
        assertEquals(new PullLimits(1000, 50_000, 50, 2), PullLimits.clamp(new PullHeader(5000, 90_000, 99, 2)));
        assertEquals(new PullLimits(10, 20, 3, 15), PullLimits.clamp(new PullHeader(10, 20, 3, 15)));
    }

    @Test
    void bootstrapTokensRoundTripAndBadOnesAreIgnored() {
        BootstrapToken t = BootstrapToken.of(100, "tasks", "task-0500");
        assertEquals("{\"asOfCommitSeq\":100,\"tables\":[\"tasks\"],\"tableIndex\":0,\"rowCursor\":\"task-0500\"}",
                t.toJson());
        assertEquals(Optional.of(t), BootstrapToken.parse(t.toJson(), "tasks"));
        assertEquals(Optional.of(BootstrapToken.of(7, "tasks", null)),
                BootstrapToken.parse("{\"asOfCommitSeq\":7,\"tables\":[\"tasks\"],\"tableIndex\":0,\"rowCursor\":null}", "tasks"));
        for (String bad : List.of("not json", "[]", "{\"asOfCommitSeq\":\"7\",\"tables\":[\"tasks\"],\"tableIndex\":0}",
                "{\"asOfCommitSeq\":7,\"tables\":[\"notes\"],\"tableIndex\":0,\"rowCursor\":null}",
                "{\"asOfCommitSeq\":7.5,\"tables\":[\"tasks\"],\"tableIndex\":0,\"rowCursor\":null}",
                "{\"asOfCommitSeq\":7,\"tables\":[\"tasks\"],\"tableIndex\":0,\"rowCursor\":3}")) {
            assertTrue(BootstrapToken.parse(bad, "tasks").isEmpty(), bad);
        }
    }
}

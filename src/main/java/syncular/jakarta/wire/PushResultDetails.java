package syncular.jakarta.wire;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * PUSH_RESULT_DETAILS (0x1B): additive companion of a rejected PUSH_RESULT with the same clientCommitId
 * (SPEC §6.3.1). ≥ 1 entry, opIndexes non-negative and unique; each entry's details are validated and normalized.
 */
public record PushResultDetails(String clientCommitId, List<Entry> entries) implements ResponseFrame {
    public PushResultDetails {
        Checks.nonEmpty(clientCommitId, "PUSH_RESULT_DETAILS.clientCommitId");
        entries = Checks.list(entries, "PUSH_RESULT_DETAILS.entries");
        if (entries.isEmpty()) throw new IllegalArgumentException("PUSH_RESULT_DETAILS needs ≥ 1 entry");
        Set<Integer> seen = new HashSet<>();
        for (Entry e : entries) {
            if (!seen.add(e.opIndex())) throw new IllegalArgumentException("PUSH_RESULT_DETAILS.opIndex must be unique");
        }
    }

    @Override public int frameType() { return FrameType.PUSH_RESULT_DETAILS.code(); }

    public record Entry(int opIndex, RejectionDetails details) {
        public Entry {
            if (opIndex < 0) throw new IllegalArgumentException("PUSH_RESULT_DETAILS.opIndex must be ≥ 0");
            if (details == null) throw new IllegalArgumentException("PUSH_RESULT_DETAILS.details is required");
        }
    }
}

package syncular.jakarta.wire;

import java.util.HashSet;
import java.util.Set;

/**
 * The response grammar (SPEC §1.6): {@code RESP_HEADER [LEASE] (PUSH_RESULT [PUSH_RESULT_DETAILS])*
 * (SUB_START (COMMIT* | (SEGMENT_REF|SEGMENT_INLINE)*) SUB_END)* [ERROR] END}, plus the reference codec's checks:
 * LEASE at most once and only as frame #2 (§7.3.2); no push results after a SUB_START; DETAILS once, right for a
 * rejected result with the same clientCommitId, citing only its error opIndexes (§6.3.1); only END after ERROR; an
 * open section at END only after ERROR. Unknown frames may appear anywhere after the header (not after ERROR).
 * Fed one frame at a time, so the streaming encoder and the decoder share it.
 */
final class ResponseGrammar {
    private final boolean decoding;
    private int index;
    private boolean sawBody;
    private boolean sawLease;
    private boolean sawSection;
    private boolean inSection;
    private boolean sectionHasCommits;
    private boolean sectionHasSegments;
    private boolean sawError;
    private PushResult lastResult;
    private boolean lastResultHasDetails;

    ResponseGrammar(boolean decoding) { this.decoding = decoding; }

    boolean inSection() { return inSection; }

    boolean sawError() { return sawError; }

    void accept(ResponseFrame f) {
        int i = index++;
        if (i == 0) {
            if (!(f instanceof RespHeader)) fail("a response must start with RESP_HEADER");
            return;
        }
        if (sawError) fail("only END may follow ERROR");
        if (f instanceof RespHeader) {
            fail("duplicate RESP_HEADER");
        } else if (f instanceof Lease) {
            if (sawLease) fail("duplicate LEASE");
            if (sawBody) fail("LEASE must immediately follow RESP_HEADER");
            sawLease = true;
        } else if (f instanceof PushResult p) {
            if (sawSection) fail("PUSH_RESULT after SUB_START");
            lastResult = p;
            lastResultHasDetails = false;
            sawBody = true;
        } else if (f instanceof PushResultDetails d) {
            if (sawSection) fail("PUSH_RESULT_DETAILS after SUB_START");
            if (lastResult == null) fail("PUSH_RESULT_DETAILS without a preceding PUSH_RESULT");
            if (lastResultHasDetails) fail("duplicate PUSH_RESULT_DETAILS");
            if (!lastResult.clientCommitId().equals(d.clientCommitId()) || lastResult.status() != PushResult.Status.REJECTED) {
                fail("PUSH_RESULT_DETAILS does not match a rejected PUSH_RESULT");
            }
            Set<Integer> errorIndexes = new HashSet<>();
            for (PushResult.OpResult r : lastResult.results()) {
                if (r instanceof PushResult.OpError) errorIndexes.add(r.opIndex());
            }
            for (PushResultDetails.Entry e : d.entries()) {
                if (!errorIndexes.contains(e.opIndex())) fail("PUSH_RESULT_DETAILS entry cites no error record");
            }
            lastResultHasDetails = true;
            sawBody = true;
        } else if (f instanceof SubStart) {
            if (inSection) fail("nested SUB_START");
            inSection = true;
            sawSection = true;
            sawBody = true;
            sectionHasCommits = false;
            sectionHasSegments = false;
        } else if (f instanceof CommitFrame) {
            if (!inSection) fail("COMMIT outside a subscription section");
            if (sectionHasSegments) fail("COMMIT and segment frames in one section");
            sectionHasCommits = true;
        } else if (f instanceof SegmentRef || f instanceof SegmentInline) {
            if (!inSection) fail("segment frame outside a subscription section");
            if (sectionHasCommits) fail("COMMIT and segment frames in one section");
            sectionHasSegments = true;
        } else if (f instanceof SubEnd) {
            if (!inSection) fail("SUB_END without SUB_START");
            inSection = false;
        } else if (f instanceof ErrorFrame) {
            sawError = true;
            sawBody = true;
        } else {
            sawBody = true; // unknown frame: skipped, but a later LEASE is no longer frame #2
        }
    }

    void finish() {
        if (index == 0) fail("a response must start with RESP_HEADER");
        if (inSection && !sawError) fail("subscription section not closed by SUB_END");
    }

    private void fail(String what) {
        if (decoding) throw DecodeException.invalid("response grammar (SPEC §1.6): " + what);
        throw new IllegalStateException("response grammar (SPEC §1.6): " + what);
    }
}

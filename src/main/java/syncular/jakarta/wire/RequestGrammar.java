package syncular.jakarta.wire;

/**
 * The request grammar {@code REQ_HEADER PUSH_COMMIT* [PULL_HEADER SUBSCRIPTION*] END} (SPEC §1.5), with the reference
 * codec's extra checks: no duplicate headers, no PUSH_COMMIT after PULL_HEADER; unknown frames anywhere after the
 * header; a request with neither push nor pull is a decode error. Fed one frame at a time.
 */
final class RequestGrammar {
    private final boolean decoding;
    private int index;
    private boolean sawPush;
    private boolean sawPull;

    RequestGrammar(boolean decoding) { this.decoding = decoding; }

    void accept(RequestFrame f) {
        int i = index++;
        if (i == 0) {
            if (!(f instanceof ReqHeader)) fail("a request must start with REQ_HEADER");
            return;
        }
        if (f instanceof ReqHeader) {
            fail("duplicate REQ_HEADER");
        } else if (f instanceof PushCommit) {
            if (sawPull) fail("PUSH_COMMIT after PULL_HEADER");
            sawPush = true;
        } else if (f instanceof PullHeader) {
            if (sawPull) fail("duplicate PULL_HEADER");
            sawPull = true;
        } else if (f instanceof Subscription) {
            if (!sawPull) fail("SUBSCRIPTION without a PULL_HEADER");
        }
    }

    void finish() {
        if (index == 0) fail("a request must start with REQ_HEADER");
        if (!sawPush && !sawPull) fail("a request must carry PUSH_COMMIT or PULL_HEADER frames");
    }

    private void fail(String what) {
        if (decoding) throw DecodeException.invalid("request grammar (SPEC §1.5): " + what);
        throw new IllegalStateException("request grammar (SPEC §1.5): " + what);
    }
}

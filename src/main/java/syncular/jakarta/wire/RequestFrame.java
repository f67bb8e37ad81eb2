package syncular.jakarta.wire;

/** A frame that may appear in a request message (SPEC §1.5). */
public sealed interface RequestFrame extends Frame permits ReqHeader, PushCommit, PullHeader, Subscription, UnknownFrame { }

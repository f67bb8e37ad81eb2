package syncular.jakarta.wire;

/** A frame that may appear in a response message (SPEC §1.6). */
public sealed interface ResponseFrame extends Frame
        permits RespHeader, Lease, PushResult, PushResultDetails, SubStart, CommitFrame, SegmentRef, SegmentInline,
        SubEnd, ErrorFrame, UnknownFrame { }

package syncular.jakarta.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** One hand-built buffer per envelope, grammar and frame rule (STYLE §6.12). */
class EnvelopeTest {
    // ------------------------------------------------------------------ builders

    /** A message with the given header and raw frames (type, payload), END appended. */
    static byte[] msg(int version, int kind, Object... typeAndPayload) {
        WireWriter w = new WireWriter();
        w.raw(new byte[] {0x53, 0x53, 0x50, 0x32}).u16(version).u8(kind).u8(0);
        for (int i = 0; i < typeAndPayload.length; i += 2) {
            byte[] p = (byte[]) typeAndPayload[i + 1];
            w.u8((Integer) typeAndPayload[i]).u32(p.length).raw(p);
        }
        return w.u8(0).u32(0).toByteArray();
    }

    static byte[] payload(Consumer<WireWriter> c) {
        WireWriter w = new WireWriter();
        c.accept(w);
        return w.toByteArray();
    }

    static final byte[] REQ_HEADER_V1 = payload(w -> w.str("client-a").i32(1));
    static final byte[] PULL = payload(w -> w.i32(0).i32(0).i32(0).u8(3));
    static final byte[] RESP_HEADER_V1 = payload(w -> w.u8(0).u8(0));
    static final byte[] SUB_START = payload(w -> w.str("s").u8(1).str("").u32(0).bool(false));
    static final byte[] SUB_END = payload(w -> w.i64(5).u8(0));

    static byte[] pushCommit(int ops) {
        return payload(w -> {
            w.str("c1").u32(ops);
            for (int i = 0; i < ops; i++) w.str("t").str("r").u8(2).u8(0).u8(0);
        });
    }

    static void assertInvalid(Executable e) {
        DecodeException ex = assertThrows(DecodeException.class, e);
        assertEquals(ErrorCode.SYNC_INVALID_REQUEST, ex.code(), ex.getMessage());
    }

    static void request(byte[] b) { RequestDecoder.decode(b); }

    static void response(byte[] b) { ResponseDecoder.decode(b); }

    // ------------------------------------------------------------------ envelope (§1.2)

    @Test @Spec("§1.2")
    void decodesTheAnnotatedPullMinimalShape() {
        Subscription s = new Subscription("sub-notes", "notes", Map.of("project", List.of("p1")), null, 42, null);
        byte[] b = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader("client-a", 1),
                new PullHeader(0, 0, 0, 3), s)));
        assertEquals(114, b.length); // SPEC-DIGEST §3.5
        RequestMessage m = RequestDecoder.decode(b);
        assertEquals(s, m.subscriptions().get(0));
        assertEquals(3, m.pullHeader().orElseThrow().accept());
    }

    @Test @Spec("§1.2 rule 1")
    void rejectsEndWithNonZeroLengthOrTrailingBytes() {
        byte[] ok = msg(1, 1, 1, REQ_HEADER_V1, 3, PULL);
        request(ok);
        byte[] endLen = ok.clone();
        endLen[endLen.length - 4] = 1;
        assertInvalid(() -> request(endLen));
        byte[] trailing = java.util.Arrays.copyOf(ok, ok.length + 1);
        assertInvalid(() -> request(trailing));
        assertInvalid(() -> request(java.util.Arrays.copyOf(ok, ok.length - 5))); // no END
    }

    @Test @Spec("§1.2")
    void rejectsWireVersionsOutsideOneToThreeAndBadKinds() {
        assertInvalid(() -> request(msg(0, 1, 1, REQ_HEADER_V1, 3, PULL)));
        assertInvalid(() -> request(msg(4, 1, 1, REQ_HEADER_V1, 3, PULL)));
        assertInvalid(() -> request(msg(0x0103, 1, 1, REQ_HEADER_V1, 3, PULL))); // u16: the high byte counts
        assertInvalid(() -> request(msg(1, 3, 1, REQ_HEADER_V1, 3, PULL)));
        assertInvalid(() -> request(msg(1, 2, 0x10, RESP_HEADER_V1)));  // a response given to the request decoder
        assertInvalid(() -> response(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL)));
        assertInvalid(() -> request(new byte[7]));
    }

    @Test @Spec("§1.2 rule 2")
    void skipsAndPreservesUnknownFramesInPlace() {
        byte[] b = msg(1, 1, 1, REQ_HEADER_V1, 0x1A, new byte[] {9, 8}, 3, PULL, 0x7f, new byte[0]);
        RequestMessage m = RequestDecoder.decode(b);
        assertInstanceOf(UnknownFrame.class, m.frames().get(1));
        assertEquals(0x7f, m.frames().get(3).frameType());
        assertArrayEquals(b, RequestEncoder.encode(m));
    }

    @Test @Spec("§1.2 rule 2")
    void rejectsUnknownFrameFirstAndOtherKindsFrames() {
        assertInvalid(() -> request(msg(1, 1, 0x20, new byte[0], 1, REQ_HEADER_V1, 3, PULL)));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 0x16, SUB_END)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 3, PULL)));
        assertThrows(IllegalArgumentException.class, () -> new UnknownFrame(0x13, new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> new UnknownFrame(0x00, new byte[0]));
    }

    @Test @Spec("§1.2 rule 3")
    void rejectsPayloadsNotConsumedExactly() {
        byte[] longer = payload(w -> w.str("client-a").i32(1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, longer, 3, PULL)));
    }

    // ------------------------------------------------------------------ request grammar and frames

    @Test @Spec("§1.5")
    void enforcesTheRequestGrammar() {
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1)));                              // no push, no pull
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 1, REQ_HEADER_V1, 3, PULL)));   // duplicate header
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 3, PULL)));            // duplicate pull
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 2, pushCommit(1))));   // push after pull
        byte[] sub = payload(w -> w.str("s").str("t").u32(0).u8(0).i64(-1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 2, pushCommit(1), 4, sub)));    // sub without pull
        request(msg(1, 1, 1, REQ_HEADER_V1, 2, pushCommit(1), 2, pushCommit(2), 3, PULL, 4, sub));
    }

    @Test @Spec("§6.1")
    void emptyCommitHasItsOwnCodeEvenWhereTheGrammarAlsoFails() {
        DecodeException e = assertThrows(DecodeException.class,
                () -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 2, pushCommit(0))));
        assertEquals(ErrorCode.SYNC_EMPTY_COMMIT, e.code());
    }

    @Test @Spec("§1.5, §1.7")
    void checksHeaderValues() {
        assertInvalid(() -> request(msg(1, 1, 1, payload(w -> w.str("").i32(1)), 3, PULL)));
        assertInvalid(() -> request(msg(1, 1, 1, payload(w -> w.str("c").i32(0)), 3, PULL)));
        assertInvalid(() -> request(msg(1, 1, 1, payload(w -> w.str("c").i32(1)), 3, payload(w -> w.i32(0).i32(0).i32(0).u8(0x13)))));
        assertInvalid(() -> request(msg(1, 1, 1, payload(w -> w.str("c").i32(1)), 2, payload(w -> w.str("").u32(1).str("t").str("r").u8(2).u8(0).u8(0)))));
    }

    @Test @Spec("§1.5, §2.1")
    void readsTheWireTwoHeaderWithAndWithoutEpoch() {
        byte[] v2 = msg(2, 1, 1, payload(w -> w.str("c").i32(1).u8(1).str("epoch-1")), 3, PULL);
        assertEquals("epoch-1", RequestDecoder.decode(v2).header().logEpoch());
        byte[] v2none = msg(2, 1, 1, payload(w -> w.str("c").i32(1).u8(0)), 3, PULL);
        assertNull(RequestDecoder.decode(v2none).header().logEpoch());
        assertInvalid(() -> request(msg(2, 1, 1, payload(w -> w.str("c").i32(1).u8(1).str("")), 3, PULL)));
        assertInvalid(() -> request(msg(2, 1, 1, REQ_HEADER_V1, 3, PULL))); // v2 header needs the presence byte
        // the same header bytes mean a different layout in wire v1: the trailing epoch is unconsumed
        assertInvalid(() -> request(msg(1, 1, 1, payload(w -> w.str("c").i32(1).u8(0)), 3, PULL)));
        assertThrows(IllegalArgumentException.class, () -> RequestEncoder.encode(new RequestMessage(1,
                List.of(new ReqHeader("c", 1, "e"), new PullHeader(0, 0, 0, 3)))));
    }

    @Test @Spec("Conventions: opt, map")
    void rejectsBadPresenceBytesAndNonCanonicalMaps() {
        byte[] badPresence = payload(w -> w.str("s").str("t").u32(0).u8(2).i64(-1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, badPresence)));
        byte[] unsorted = payload(w -> w.str("s").str("t").u32(2).str("b").u32(0).str("a").u32(0).u8(0).i64(-1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, unsorted)));
        byte[] dup = payload(w -> w.str("s").str("t").u32(2).str("a").u32(0).str("a").u32(0).u8(0).i64(-1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, dup)));
        // UTF-16 code-unit order, not UTF-8 byte order: U+1F600 (D83D DE00) sorts before U+FF21
        String bmpHigh = "\uFF21";
        String astral = "\uD83D\uDE00";
        String first = bmpHigh.compareTo(astral) < 0 ? bmpHigh : astral;
        String second = first.equals(bmpHigh) ? astral : bmpHigh;
        byte[] utf16Order = payload(w -> w.str("s").str("t").u32(2).str(first).u32(0).str(second).u32(0).u8(0).i64(-1).u8(0));
        request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, utf16Order));
        assertEquals(astral, first); // 0xD83D < 0xFF21 although U+1F600 > U+FF21 as code points and in UTF-8
        byte[] notJson = payload(w -> w.str("s").str("t").u32(0).u8(1).str("{x").i64(-1).u8(0));
        assertInvalid(() -> request(msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, notJson)));
    }

    // ------------------------------------------------------------------ response grammar and frames

    @Test @Spec("§1.6")
    void enforcesTheResponseGrammar() {
        byte[] commit = payload(w -> w.i64(1).i64(0).str("a").u32(1).str("t").u32(0));
        byte[] inline = RowsSegmentEncoder.encode(new RowsSegment("t", 1, List.of(), List.of()));
        byte[] err = payload(w -> w.str("sync.internal_error").str("m").str("internal").bool(true).str("retryLater").u8(0));
        response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x13, commit, 0x16, SUB_END));
        assertInvalid(() -> response(msg(1, 2, 0x12, SUB_START, 0x16, SUB_END)));                             // no header
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x13, commit)));                          // outside section
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x12, SUB_START)));      // nested
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x13, commit, 0x15, inline, 0x16, SUB_END)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START)));                       // unclosed
        response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x1F, err));                                 // ERROR may cut it
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x1F, err, 0x12, SUB_START)));            // only END after ERROR
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x1F, err, 0x20, new byte[0])));
    }

    @Test @Spec("§7.3.2")
    void leaseOnlyOnceAndOnlyAsSecondFrame() {
        byte[] lease = payload(w -> w.str("l").i64(1));
        response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x19, lease));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x19, lease, 0x19, lease)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x20, new byte[0], 0x19, lease)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x19, payload(w -> w.str("").i64(1)))));
    }

    @Test @Spec("§6.3, §6.3.1")
    void pushResultTiesAndDetailsCompanion() {
        byte[] appliedNoSeq = payload(w -> w.str("c").u8(1).u8(0).u32(0));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, appliedNoSeq)));
        byte[] rejectedSeq = payload(w -> w.str("c").u8(3).u8(1).i64(3).u32(0));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, rejectedSeq)));
        byte[] rejected = payload(w -> w.str("c").u8(3).u8(0).u32(1).i32(0).u8(3).str("app.bad").str("m").bool(false));
        byte[] details = payload(w -> w.str("c").u32(1).i32(0).str("{\"reason\":\"outside_day\",\"fieldPaths\":[\"a\"]}"));
        ResponseMessage m = ResponseDecoder.decode(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, rejected, 0x1B, details));
        PushResultDetails d = (PushResultDetails) m.frames().get(2);
        assertEquals("{\"fieldPaths\":[\"a\"],\"reason\":\"outside_day\"}", d.entries().get(0).details().toJson()); // normalized
        byte[] wrongIndex = payload(w -> w.str("c").u32(1).i32(1).str("{\"reason\":\"x\"}"));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, rejected, 0x1B, wrongIndex)));
        byte[] badToken = payload(w -> w.str("c").u32(1).i32(0).str("{\"reason\":\"Not A Token\"}"));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, rejected, 0x1B, badToken)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x1B, details)));                 // no result before
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x11, rejected, 0x1B, details, 0x1B, details)));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x16, SUB_END, 0x11, rejected)));
    }

    @Test @Spec("§4.5")
    void commitTableIndexAndPresenceTies() {
        byte[] badIndex = payload(w -> w.i64(1).i64(0).str("a").u32(1).str("t").u32(1)
                .u16(1).str("r").u8(2).u8(0).u32(0).u8(0));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x13, badIndex, 0x16, SUB_END)));
        byte[] deleteWithRow = payload(w -> w.i64(1).i64(0).str("a").u32(1).str("t").u32(1)
                .u16(0).str("r").u8(2).u8(0).u32(0).u8(1).bytes(new byte[] {0}));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x13, deleteWithRow, 0x16, SUB_END)));
        byte[] upsertNoVersion = payload(w -> w.i64(1).i64(0).str("a").u32(1).str("t").u32(1)
                .u16(0).str("r").u8(1).u8(0).u32(0).u8(1).bytes(new byte[] {0}));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x13, upsertNoVersion, 0x16, SUB_END)));
    }

    @Test @Spec("§5.4")
    void segmentRefUrlTieAndMediaType() {
        byte[] urlNoExp = payload(w -> w.str("sha256:x").u8(1).str("t").i64(1).i64(1).i64(1).str("d")
                .u8(0).u8(0).u8(1).str("https://x").u8(0));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x14, urlNoExp, 0x16, SUB_END)));
        byte[] media3 = payload(w -> w.str("sha256:x").u8(3).str("t").i64(1).i64(1).i64(1).str("d")
                .u8(0).u8(0).u8(0).u8(0));
        assertInvalid(() -> response(msg(1, 2, 0x10, RESP_HEADER_V1, 0x12, SUB_START, 0x14, media3, 0x16, SUB_END)));
    }

    @Test @Spec("§1.6, §2.1")
    void respHeaderLayoutFollowsTheWireVersion() {
        byte[] v2 = payload(w -> w.u8(1).i32(3).u8(0).str("e").bool(true));
        RespHeader h = (RespHeader) ResponseDecoder.decode(msg(2, 2, 0x10, v2)).frames().get(0);
        assertEquals(RespHeader.v2(3, null, "e", true), h);
        assertInvalid(() -> response(msg(2, 2, 0x10, payload(w -> w.u8(0).u8(0).str("").bool(false)))));
        assertInvalid(() -> response(msg(2, 2, 0x10, RESP_HEADER_V1)));
        assertInvalid(() -> response(msg(1, 2, 0x10, v2)));
        assertThrows(IllegalArgumentException.class, () -> ResponseEncoder.encode(new ResponseMessage(2, List.of(RespHeader.v1(null, null)))));
        assertThrows(IllegalArgumentException.class, () -> ResponseEncoder.encode(new ResponseMessage(1, List.of(RespHeader.v2(null, null, "e", false)))));
    }

    // ------------------------------------------------------------------ wire 3 (SPEC @008c36d5, WIRE3-DELTA §1)

    @Test @Spec("§1.5, §1.6 @008c36d5; WIRE3-DELTA §1.2")
    void wireThreeHeadersHaveTheWireTwoLayout() {
        byte[] withEpoch = payload(w -> w.str("c").i32(1).u8(1).str("epoch-1"));
        byte[] acquire = payload(w -> w.str("c").i32(1).u8(0));
        for (byte[] p : List.of(withEpoch, acquire)) {
            RequestMessage v2 = RequestDecoder.decode(msg(2, 1, 1, p, 3, PULL));
            byte[] v3bytes = msg(3, 1, 1, p, 3, PULL);
            RequestMessage v3 = RequestDecoder.decode(v3bytes);
            assertEquals(3, v3.wireVersion());
            assertEquals(v2.frames(), v3.frames());
            assertArrayEquals(v3bytes, RequestEncoder.encode(v3));
        }
        assertEquals("epoch-1", RequestDecoder.decode(msg(3, 1, 1, withEpoch, 3, PULL)).header().logEpoch());
        assertInvalid(() -> request(msg(3, 1, 1, REQ_HEADER_V1, 3, PULL))); // the presence byte is required
        byte[] resp = payload(w -> w.u8(1).i32(3).u8(0).str("e").bool(true));
        assertEquals(RespHeader.v2(3, null, "e", true), ResponseDecoder.decode(msg(3, 2, 0x10, resp)).frames().get(0));
        assertInvalid(() -> response(msg(3, 2, 0x10, RESP_HEADER_V1)));
        assertThrows(IllegalArgumentException.class, () -> ResponseEncoder.encode(new ResponseMessage(3, List.of(RespHeader.v1(null, null)))));
        assertThrows(IllegalArgumentException.class, () -> RequestEncoder.encode(new RequestMessage(3,
                List.of(new ReqHeader("c", 1, ""), new PullHeader(0, 0, 0, 3)))));
    }

    static final byte[] SERVER_ROW = {0x00, 0x01, 0x00, 0x00, 0x00, 0x61};

    static ResponseMessage conflictResponse(int wire, byte[] conflictColumns) {
        RespHeader h = WireVersion.hasLogEpoch(wire) ? RespHeader.v2(null, null, "e", false) : RespHeader.v1(null, null);
        PushResult r = new PushResult("c-1", PushResult.Status.REJECTED, null, List.of(new PushResult.Conflict(0,
                ErrorCode.SYNC_VERSION_CONFLICT.wire(), "m", 7, SERVER_ROW, conflictColumns)));
        return new ResponseMessage(wire, List.of(h, r));
    }

    @Test @Spec("§6.3 @008c36d5")
    void wireThreeConflictCarriesConflictColumnsAfterServerRow() {
        byte[] b = ResponseEncoder.encode(conflictResponse(3, new byte[] {0x02}));
        // … serverVersion i64 · serverRow bytes · conflictColumns bytes, then END
        String tail = "0700000000000000" + "06000000" + "000100000061" + "01000000" + "02" + "0000000000";
        assertTrue(java.util.HexFormat.of().formatHex(b).endsWith(tail), java.util.HexFormat.of().formatHex(b));
        ResponseMessage back = ResponseDecoder.decode(b);
        PushResult.Conflict c = (PushResult.Conflict) ((PushResult) back.frames().get(1)).results().get(0);
        assertArrayEquals(new byte[] {0x02}, c.conflictColumns());
        assertArrayEquals(SERVER_ROW, c.serverRow());
        assertArrayEquals(b, ResponseEncoder.encode(back));
        // plain bytes: the envelope codec takes any length, the empty bitmap included
        byte[] empty = ResponseEncoder.encode(conflictResponse(3, new byte[0]));
        assertArrayEquals(new byte[0], ((PushResult.Conflict) ((PushResult) ResponseDecoder.decode(empty).frames().get(1))
                .results().get(0)).conflictColumns());
    }

    @Test @Spec("§6.3")
    void wireOneAndTwoConflictsHaveNoConflictColumns() {
        for (int v : new int[] {1, 2}) {
            byte[] without = ResponseEncoder.encode(conflictResponse(v, null));
            byte[] with = ResponseEncoder.encode(conflictResponse(v, new byte[] {0x02}));
            assertArrayEquals(without, with, "wire " + v + " ignores conflictColumns");
            PushResult.Conflict c = (PushResult.Conflict) ((PushResult) ResponseDecoder.decode(with).frames().get(1)).results().get(0);
            assertNull(c.conflictColumns());
        }
        byte[] v2 = ResponseEncoder.encode(conflictResponse(2, null));
        byte[] v3 = ResponseEncoder.encode(conflictResponse(3, new byte[] {0x02}));
        assertEquals(v2.length + 5, v3.length); // u32 length + one bitmap byte
    }

    @Test @Spec("§6.3 @008c36d5")
    void wireThreeRefusesAConflictWithoutConflictColumns() {
        assertThrows(IllegalArgumentException.class, () -> ResponseEncoder.encode(conflictResponse(3, null)));
        ResponseWriter w = new ResponseWriter(new ByteArrayOutputStream(), 3);
        w.write(RespHeader.v2(null, null, "e", false));
        assertThrows(IllegalArgumentException.class, () -> w.write(conflictResponse(3, null).frames().get(1)));
    }

    @Test @Spec("§1.2 rule 3, §6.3 @008c36d5")
    void aConflictRecordIsReadInItsMessagesWireVersion() {
        byte[] rejected2 = payload(w -> w.str("c").u8(3).u8(0).u32(1).i32(0).u8(2).str("sync.version_conflict").str("m")
                .i64(7).bytes(SERVER_ROW));
        byte[] rejected3 = payload(w -> w.raw(rejected2).bytes(new byte[] {0x02}));
        byte[] h = payload(w -> w.u8(0).u8(0).str("e").bool(false));
        response(msg(2, 2, 0x10, h, 0x11, rejected2));
        response(msg(3, 2, 0x10, h, 0x11, rejected3));
        assertInvalid(() -> response(msg(3, 2, 0x10, h, 0x11, rejected2)));  // conflictColumns missing
        assertInvalid(() -> response(msg(2, 2, 0x10, h, 0x11, rejected3)));  // trailing bytes in a wire-2 frame
        byte[] overlong = payload(w -> w.raw(rejected2).u32(2).u8(0x02));
        assertInvalid(() -> response(msg(3, 2, 0x10, h, 0x11, overlong)));
    }

    // ------------------------------------------------------------------ streaming writer

    @Test @Spec("§1.4, §1.6")
    void responseWriterStreamsFrameByFrameAndRefusesBadGrammar() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ResponseWriter w = new ResponseWriter(out, 2);
        assertEquals(8, out.size());
        w.write(RespHeader.v2(null, 5, "epoch", false));
        int afterHeader = out.size();
        assertTrue(afterHeader > 8);
        w.write(SubStart.active("s", Map.of("project", List.of("p1")), false));
        assertThrows(IllegalStateException.class, () -> w.write(new Lease("l", 1)));
        assertTrue(w.inSection());
        assertThrows(IllegalStateException.class, w::end);
        w.write(ErrorFrame.of(ErrorCode.SYNC_INTERNAL_ERROR, "failed", null));
        assertThrows(IllegalStateException.class, () -> w.write(new SubEnd(1, null)));
        w.end();
        assertEquals(out.size(), w.bytesWritten());
        ResponseMessage m = ResponseDecoder.decode(out.toByteArray());
        assertEquals(2, m.wireVersion());
        assertEquals(3, m.frames().size());
        ErrorFrame e = (ErrorFrame) m.frames().get(2);
        assertEquals("internal", e.category());
        assertEquals("retryLater", e.recommendedAction());
    }

    @Test @Spec("§9")
    void aResponseIsEncodedInTheWireVersionOfItsRequest() {
        for (int v = WireVersion.MIN; v <= WireVersion.MAX; v++) {
            RespHeader h = WireVersion.hasLogEpoch(v) ? RespHeader.v2(null, 1, "e", false) : RespHeader.v1(null, 1);
            List<ResponseFrame> frames = new ArrayList<>(List.of(h, SubStart.revoked("s"), new SubEnd(-1, null)));
            byte[] b = ResponseEncoder.encode(new ResponseMessage(v, frames));
            assertEquals(v, Envelope.readHeader(b).wireVersion());
            assertEquals(frames, ResponseDecoder.decode(b).frames());
        }
    }

    @Test @Spec("§1.7")
    void decodeErrorsNeverEchoPayloadBytes() {
        String secret = "SECRET-PHI";
        List<byte[]> bad = List.of(
                msg(1, 1, 1, payload(w -> w.str(secret).i32(0)), 3, PULL),                                      // schemaVersion 0
                msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, payload(w -> w.str(secret).str("t").u32(2).str("b").u32(0)
                        .str("a").u32(0).u8(0).i64(-1).u8(0))),                                                    // key order
                msg(1, 1, 1, REQ_HEADER_V1, 3, PULL, 4, payload(w -> w.str("s").str("t").u32(0).u8(1)
                        .str("{\"" + secret + "\"").i64(-1).u8(0))),                                              // params not JSON
                msg(1, 2, 0x10, RESP_HEADER_V1, 0x1F, payload(w -> w.str(secret).str(secret).str(secret).u8(7))));
        for (byte[] b : bad) {
            DecodeException e = assertThrows(DecodeException.class, () -> Vectors.decode(b[6] == 1 ? "request" : "response", b));
            assertTrue(!e.getMessage().contains(secret), e.getMessage());
        }
        List<ColumnDescriptor> cols = List.of(new ColumnDescriptor(secret, TypeTag.JSON, false));
        DecodeException e = assertThrows(DecodeException.class, () -> RowCodec.decode(cols, RowCodecTest.row(w -> w.str(secret))));
        assertTrue(!e.getMessage().contains(secret), e.getMessage());
    }
}

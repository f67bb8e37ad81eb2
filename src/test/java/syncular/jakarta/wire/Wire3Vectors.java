package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Wire-3 request/response vectors derived from the 0.15.48 ones (WIRE3-DELTA §1, §9): no wire-3 {@code .bin} can be
 * read here, so each is the 0.15.48 message decoded and re-encoded at wire version 3 with exactly what the delta
 * says changes — the header version; for wire-1 fixtures an absent REQ_HEADER {@code logEpoch} (one {@code 00}) or
 * the wire-2 RESP_HEADER fields ({@link #EPOCH}, {@code resetRequired = false}); each push payload re-encoded as the
 * all-present sparse row of the same values; the conflict record's reference-server message and its
 * {@code conflictColumns} (bit 1, {@code title}). Derived in memory at test time; nothing is written.
 */
final class Wire3Vectors {
    private Wire3Vectors() { }

    /** The log epoch of the fixtures' wire-2 responses, used for the wire-1 ones raised to wire 3. */
    static final String EPOCH = "epoch-2026-07-02-a";

    /** The reference server's wire-3 conflict message (WIRE3-DELTA §1.4). */
    static final String CONFLICT_MESSAGE = "present columns moved past baseVersion (§6.2)";

    /** The fixture tables the 0.15.48 push payloads are rows of; every one has its primary key first. */
    static final Map<String, List<ColumnDescriptor>> TABLES = Map.of("notes", RowCodecTest.NOTES);

    /** The 0.15.48 request at wire 3. */
    static RequestMessage derive(RequestMessage m) {
        List<RequestFrame> frames = new ArrayList<>(m.frames().size());
        for (RequestFrame f : m.frames()) {
            if (f instanceof PushCommit p) {
                List<PushCommit.Operation> ops = new ArrayList<>();
                for (PushCommit.Operation o : p.operations()) {
                    byte[] payload = o.payload() == null ? null : sparse(o.table(), o.payload());
                    ops.add(new PushCommit.Operation(o.table(), o.rowId(), o.op(), o.baseVersion(), payload));
                }
                frames.add(new PushCommit(p.clientCommitId(), ops));
            } else {
                frames.add(f); // REQ_HEADER: a wire-1 header has no logEpoch, which wire 3 writes as absent
            }
        }
        return new RequestMessage(WireVersion.V3, frames);
    }

    /** The 0.15.48 response at wire 3. */
    static ResponseMessage derive(ResponseMessage m) {
        List<ResponseFrame> frames = new ArrayList<>(m.frames().size());
        for (ResponseFrame f : m.frames()) {
            if (f instanceof RespHeader h && h.logEpoch() == null) {
                frames.add(RespHeader.v2(h.requiredSchemaVersion(), h.latestSchemaVersion(), EPOCH, false));
            } else if (f instanceof PushResult p) {
                List<PushResult.OpResult> results = new ArrayList<>();
                for (PushResult.OpResult o : p.results()) {
                    if (o instanceof PushResult.Conflict c) {
                        // the fixture's conflict is on notes; the concurrent edit moved `title`
                        results.add(new PushResult.Conflict(c.opIndex(), c.code(), CONFLICT_MESSAGE, c.serverVersion(),
                                c.serverRow(), ColumnBitmap.ofNames(RowCodecTest.NOTES, List.of("title"))));
                    } else {
                        results.add(o);
                    }
                }
                frames.add(new PushResult(p.clientCommitId(), p.status(), p.commitSeq(), results));
            } else {
                frames.add(f);
            }
        }
        return new ResponseMessage(WireVersion.V3, frames);
    }

    /** A full-row payload as the all-present sparse row of the same values. */
    static byte[] sparse(String table, byte[] fullRow) {
        List<ColumnDescriptor> cols = TABLES.get(table);
        if (cols == null) throw new IllegalStateException("no fixture columns for push table " + table);
        return SparseRowCodec.encode(cols, 0, SparseRow.full(RowCodec.decodeLossless(cols, fullRow)));
    }

    /** The wire-3 bytes of a 0.15.48 request or response vector. */
    static byte[] derive(String kind, byte[] bytes) {
        switch (kind) {
            case "request": return RequestEncoder.encode(derive(RequestDecoder.decode(bytes)));
            case "response": return ResponseEncoder.encode(derive(ResponseDecoder.decode(bytes)));
            default: throw new IllegalArgumentException("no wire-3 derivation for vector kind " + kind);
        }
    }

    /**
     * The push-kind sparse rows of WIRE3-DELTA §2 over {@link SparseRowCodecTest#PUSH}: {@code sparse-row-full}
     * (derived, 65 B) and a partial row of the {@code sparse-row} shape (id, present-NULL title, meta).
     */
    static List<Vectors.Binary> pushBinaries() {
        boolean[] present = {true, true, false, false, false, false, true, false, false};
        Object[] values = {"n-1", null, null, null, null, null, "{\"tags\": [\"a\"]}", null, null};
        return List.of(new Vectors.Binary("push", "sparse-row-full@derived", SparseRowCodecTest.SPARSE_ROW_FULL),
                new Vectors.Binary("push", "sparse-row-partial", SparseRowCodec.encode(SparseRowCodecTest.PUSH, 0, present, values)));
    }

    /** Every valid 0.15.48 request/response vector, derived to wire 3 (named {@code <name>@w3}). */
    static List<Vectors.Binary> binaries() {
        List<Vectors.Binary> out = new ArrayList<>();
        for (Vectors.Binary v : Vectors.validBinaries()) {
            if (v.kind().equals("request") || v.kind().equals("response")) {
                out.add(new Vectors.Binary(v.kind(), v.name() + "@w3", derive(v.kind(), v.bytes())));
            }
        }
        return out;
    }
}

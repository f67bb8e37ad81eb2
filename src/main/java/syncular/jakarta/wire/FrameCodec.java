package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Payload layouts of every known frame, both directions, for a given wire version (SPEC §1.5, §1.6, §4, §5.4, §6).
 * Decoders consume the payload exactly (SPEC §1.2 rule 3), check enum ranges and presence ties, and throw
 * {@link DecodeException}; encoders refuse what the wire cannot carry with {@link IllegalArgumentException}.
 */
final class FrameCodec {
    private FrameCodec() { }

    // ------------------------------------------------------------------ decode

    /** Decodes one request-kind frame payload {@code [off, off+len)} of {@code buf}. */
    static RequestFrame readRequestFrame(int type, byte[] buf, int off, int len, int wireVersion) {
        WireReader r = new WireReader(buf, off, len);
        RequestFrame f;
        switch (type) {
            case 0x01: f = reqHeader(r, wireVersion); break;
            case 0x02: f = pushCommit(r); break;
            case 0x03: f = pullHeader(r); break;
            case 0x04: f = subscription(r); break;
            default:
                FrameType known = FrameType.forCode(type).orElse(null);
                if (known != null) {
                    // SPEC §1.2 rule 2: a type of the other message kind is an error, not "unknown"
                    throw DecodeException.invalid("frame type " + known + " is not allowed in a request");
                }
                return new UnknownFrame(type, copy(buf, off, len));
        }
        r.expectEnd(FrameType.forCode(type).get() + " payload");
        return f;
    }

    /** Decodes one response-kind frame payload {@code [off, off+len)} of {@code buf}. */
    static ResponseFrame readResponseFrame(int type, byte[] buf, int off, int len, int wireVersion) {
        WireReader r = new WireReader(buf, off, len);
        ResponseFrame f;
        switch (type) {
            case 0x10: f = respHeader(r, wireVersion); break;
            case 0x11: f = pushResult(r, wireVersion); break;
            case 0x12: f = subStart(r); break;
            case 0x13: f = commit(r); break;
            case 0x14: f = segmentRef(r); break;
            case 0x15:
                // SPEC §5.7: the payload is one complete SSG2 rows segment, checked structurally
                RowsSegmentDecoder.validate(buf, off, len);
                return new SegmentInline(copy(buf, off, len));
            case 0x16: f = subEnd(r); break;
            case 0x19: f = lease(r); break;
            case 0x1B: f = pushResultDetails(r); break;
            case 0x1F: f = error(r); break;
            default:
                FrameType known = FrameType.forCode(type).orElse(null);
                if (known != null) throw DecodeException.invalid("frame type " + known + " is not allowed in a response");
                return new UnknownFrame(type, copy(buf, off, len));
        }
        r.expectEnd(FrameType.forCode(type).get() + " payload");
        return f;
    }

    private static byte[] copy(byte[] buf, int off, int len) {
        byte[] b = new byte[len];
        System.arraycopy(buf, off, b, 0, len);
        return b;
    }

    private static ReqHeader reqHeader(WireReader r, int wireVersion) {
        String clientId = r.str("REQ_HEADER.clientId");
        if (clientId.isEmpty()) throw DecodeException.invalid("REQ_HEADER.clientId must be non-empty");
        int schemaVersion = r.i32("REQ_HEADER.schemaVersion");
        if (schemaVersion < 1) throw DecodeException.invalid("REQ_HEADER.schemaVersion must be ≥ 1");
        String logEpoch = null;
        if (WireVersion.hasLogEpoch(wireVersion) && r.present("REQ_HEADER.logEpoch")) {
            logEpoch = r.str("REQ_HEADER.logEpoch");
            if (logEpoch.isEmpty()) throw DecodeException.invalid("REQ_HEADER.logEpoch must be non-empty");
        }
        return new ReqHeader(clientId, schemaVersion, logEpoch);
    }

    private static PushCommit pushCommit(WireReader r) {
        String id = r.str("PUSH_COMMIT.clientCommitId");
        if (id.isEmpty()) throw DecodeException.invalid("PUSH_COMMIT.clientCommitId must be non-empty");
        // minimum operation: table str + rowId str + op + 2 presence bytes = 11 bytes
        int n = r.count("PUSH_COMMIT.operations", 11);
        if (n == 0) throw new DecodeException(ErrorCode.SYNC_EMPTY_COMMIT, "PUSH_COMMIT carries no operation");
        List<PushCommit.Operation> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String table = r.str("PUSH_COMMIT.table");
            String rowId = r.str("PUSH_COMMIT.rowId");
            Op op = Op.forCode(r.u8("PUSH_COMMIT.op"));
            if (op == null) throw DecodeException.invalid("PUSH_COMMIT operation " + i + ": op byte outside {1, 2}");
            Long base = r.present("PUSH_COMMIT.baseVersion") ? r.i64("PUSH_COMMIT.baseVersion") : null;
            byte[] payload = r.present("PUSH_COMMIT.payload") ? r.bytes("PUSH_COMMIT.payload") : null;
            if ((payload != null) != (op == Op.UPSERT)) {
                throw DecodeException.invalid("PUSH_COMMIT operation " + i + ": payload must be present iff op is upsert");
            }
            ops.add(new PushCommit.Operation(table, rowId, op, base, payload));
        }
        return new PushCommit(id, List.copyOf(ops));
    }

    private static PullHeader pullHeader(WireReader r) {
        int limitCommits = r.i32("PULL_HEADER.limitCommits");
        int limitRows = r.i32("PULL_HEADER.limitSnapshotRows");
        int maxPages = r.i32("PULL_HEADER.maxSnapshotPages");
        int accept = r.u8("PULL_HEADER.accept");
        if ((accept & 0xf0) != 0) throw DecodeException.invalid("PULL_HEADER.accept bits 4-7 must be zero");
        return new PullHeader(limitCommits, limitRows, maxPages, accept);
    }

    private static Subscription subscription(WireReader r) {
        String id = r.str("SUBSCRIPTION.id");
        String table = r.str("SUBSCRIPTION.table");
        Map<String, List<String>> scopes = r.scopeLists("SUBSCRIPTION.scopes");
        String params = r.present("SUBSCRIPTION.params") ? r.json("SUBSCRIPTION.params") : null;
        long cursor = r.i64("SUBSCRIPTION.cursor");
        String state = r.present("SUBSCRIPTION.bootstrapState") ? r.json("SUBSCRIPTION.bootstrapState") : null;
        return new Subscription(id, table, scopes, params, cursor, state);
    }

    private static RespHeader respHeader(WireReader r, int wireVersion) {
        Integer required = r.present("RESP_HEADER.requiredSchemaVersion") ? r.i32("RESP_HEADER.requiredSchemaVersion") : null;
        Integer latest = r.present("RESP_HEADER.latestSchemaVersion") ? r.i32("RESP_HEADER.latestSchemaVersion") : null;
        if (!WireVersion.hasLogEpoch(wireVersion)) return new RespHeader(required, latest, null, null);
        String epoch = r.str("RESP_HEADER.logEpoch");
        if (epoch.isEmpty()) throw DecodeException.invalid("RESP_HEADER.logEpoch must be non-empty");
        boolean reset = r.bool("RESP_HEADER.resetRequired");
        return new RespHeader(required, latest, epoch, reset);
    }

    private static Lease lease(WireReader r) {
        String id = r.str("LEASE.leaseId");
        if (id.isEmpty()) throw DecodeException.invalid("LEASE.leaseId must be non-empty");
        return new Lease(id, r.i64("LEASE.expiresAtMs"));
    }

    private static PushResult pushResult(WireReader r, int wireVersion) {
        String id = r.str("PUSH_RESULT.clientCommitId");
        PushResult.Status status = PushResult.Status.forCode(r.u8("PUSH_RESULT.status"));
        if (status == null) throw DecodeException.invalid("PUSH_RESULT.status outside {1, 2, 3}");
        Long seq = r.present("PUSH_RESULT.commitSeq") ? r.i64("PUSH_RESULT.commitSeq") : null;
        if ((seq != null) != (status != PushResult.Status.REJECTED)) {
            throw DecodeException.invalid("PUSH_RESULT.commitSeq must be present iff status is applied or cached");
        }
        int n = r.count("PUSH_RESULT.results", 5);
        List<PushResult.OpResult> results = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int opIndex = r.i32("PUSH_RESULT.opIndex");
            int s = r.u8("PUSH_RESULT.result.status");
            if (s == 1) {
                results.add(new PushResult.Applied(opIndex));
            } else if (s == 2) {
                String code = r.str("PUSH_RESULT.conflict.code");
                String message = r.str("PUSH_RESULT.conflict.message");
                long serverVersion = r.i64("PUSH_RESULT.conflict.serverVersion");
                byte[] row = r.bytes("PUSH_RESULT.conflict.serverRow");
                // SPEC @008c36d5 §6.3: wire 3 appends the evidence bitmap; plain bytes, so no new presence tie
                byte[] columns = WireVersion.hasConflictColumns(wireVersion)
                        ? r.bytes("PUSH_RESULT.conflict.conflictColumns") : null;
                results.add(new PushResult.Conflict(opIndex, code, message, serverVersion, row, columns));
            } else if (s == 3) {
                String code = r.str("PUSH_RESULT.error.code");
                String message = r.str("PUSH_RESULT.error.message");
                boolean retryable = r.bool("PUSH_RESULT.error.retryable");
                results.add(new PushResult.OpError(opIndex, code, message, retryable));
            } else {
                throw DecodeException.invalid("PUSH_RESULT result " + i + ": status byte outside {1, 2, 3}");
            }
        }
        return new PushResult(id, status, seq, List.copyOf(results));
    }

    private static PushResultDetails pushResultDetails(WireReader r) {
        String id = r.str("PUSH_RESULT_DETAILS.clientCommitId");
        if (id.isEmpty()) throw DecodeException.invalid("PUSH_RESULT_DETAILS.clientCommitId must be non-empty");
        int n = r.count("PUSH_RESULT_DETAILS.entries", 8);
        if (n == 0) throw DecodeException.invalid("PUSH_RESULT_DETAILS needs at least one entry");
        List<PushResultDetails.Entry> entries = new ArrayList<>(n);
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            int opIndex = r.i32("PUSH_RESULT_DETAILS.opIndex");
            if (opIndex < 0 || !seen.add(opIndex)) {
                throw DecodeException.invalid("PUSH_RESULT_DETAILS opIndex values must be unique and non-negative");
            }
            String text = r.str("PUSH_RESULT_DETAILS.detailsJson");
            RejectionDetails d;
            try {
                d = RejectionDetails.fromJsonValue(Json.parse(text));
            } catch (Json.JsonException | IllegalArgumentException e) {
                // SPEC §6.3.1: violations are decode errors; the reason names the rule, never the text
                throw DecodeException.invalid("PUSH_RESULT_DETAILS entry " + i + ": " + (e instanceof Json.JsonException
                        ? "details are not JSON" : e.getMessage()));
            }
            entries.add(new PushResultDetails.Entry(opIndex, d));
        }
        return new PushResultDetails(id, entries);
    }

    private static SubStart subStart(WireReader r) {
        String id = r.str("SUB_START.id");
        SubStart.Status status = SubStart.Status.forCode(r.u8("SUB_START.status"));
        if (status == null) throw DecodeException.invalid("SUB_START.status outside {1, 2, 3}");
        String reason = r.str("SUB_START.reasonCode");
        Map<String, List<String>> scopes = r.scopeLists("SUB_START.effectiveScopes");
        boolean bootstrap = r.bool("SUB_START.bootstrap");
        return new SubStart(id, status, reason, scopes, bootstrap);
    }

    private static CommitFrame commit(WireReader r) {
        long seq = r.i64("COMMIT.commitSeq");
        long createdAt = r.i64("COMMIT.createdAtMs");
        String actor = r.str("COMMIT.actorId");
        int nt = r.count("COMMIT.tables", 4);
        List<String> tables = new ArrayList<>(nt);
        for (int i = 0; i < nt; i++) tables.add(r.str("COMMIT.tables"));
        // minimum change: u16 + rowId str + op + presence + scopes count + presence = 13 bytes
        int nc = r.count("COMMIT.changes", 13);
        List<CommitFrame.Change> changes = new ArrayList<>(nc);
        for (int i = 0; i < nc; i++) {
            int ti = r.u16("COMMIT.tableIndex");
            if (ti >= nt) throw DecodeException.invalid("COMMIT change " + i + ": tableIndex " + ti + " ≥ " + nt + " tables");
            String rowId = r.str("COMMIT.rowId");
            Op op = Op.forCode(r.u8("COMMIT.op"));
            if (op == null) throw DecodeException.invalid("COMMIT change " + i + ": op byte outside {1, 2}");
            Long version = r.present("COMMIT.rowVersion") ? r.i64("COMMIT.rowVersion") : null;
            Map<String, String> scopes = r.stringMap("COMMIT.scopes");
            byte[] row = r.present("COMMIT.row") ? r.bytes("COMMIT.row") : null;
            boolean upsert = op == Op.UPSERT;
            if ((version != null) != upsert || (row != null) != upsert) {
                throw DecodeException.invalid("COMMIT change " + i + ": rowVersion and row must be present iff op is upsert");
            }
            changes.add(new CommitFrame.Change(ti, rowId, op, version, scopes, row));
        }
        return new CommitFrame(seq, createdAt, actor, List.copyOf(tables), List.copyOf(changes));
    }

    private static SegmentRef segmentRef(WireReader r) {
        String id = r.str("SEGMENT_REF.segmentId");
        SegmentRef.MediaType mt = SegmentRef.MediaType.forCode(r.u8("SEGMENT_REF.mediaType"));
        if (mt == null) throw DecodeException.invalid("SEGMENT_REF.mediaType outside {1, 2}");
        String table = r.str("SEGMENT_REF.table");
        long byteLength = r.i64("SEGMENT_REF.byteLength");
        long rowCount = r.i64("SEGMENT_REF.rowCount");
        long asOf = r.i64("SEGMENT_REF.asOfCommitSeq");
        String digest = r.str("SEGMENT_REF.scopeDigest");
        String rowCursor = r.present("SEGMENT_REF.rowCursor") ? r.str("SEGMENT_REF.rowCursor") : null;
        String next = r.present("SEGMENT_REF.nextRowCursor") ? r.str("SEGMENT_REF.nextRowCursor") : null;
        String url = r.present("SEGMENT_REF.url") ? r.str("SEGMENT_REF.url") : null;
        Long exp = r.present("SEGMENT_REF.urlExpiresAtMs") ? r.i64("SEGMENT_REF.urlExpiresAtMs") : null;
        if ((url == null) != (exp == null)) throw DecodeException.invalid("SEGMENT_REF.urlExpiresAtMs must be present iff url is");
        return new SegmentRef(id, mt, table, byteLength, rowCount, asOf, digest, rowCursor, next, url, exp);
    }

    private static SubEnd subEnd(WireReader r) {
        long next = r.i64("SUB_END.nextCursor");
        String state = r.present("SUB_END.bootstrapState") ? r.json("SUB_END.bootstrapState") : null;
        return new SubEnd(next, state);
    }

    private static ErrorFrame error(WireReader r) {
        String code = r.str("ERROR.code");
        String message = r.str("ERROR.message");
        String category = r.str("ERROR.category");
        boolean retryable = r.bool("ERROR.retryable");
        String action = r.str("ERROR.recommendedAction");
        String details = r.present("ERROR.details") ? r.json("ERROR.details") : null;
        return new ErrorFrame(code, message, category, retryable, action, details);
    }

    // ------------------------------------------------------------------ encode

    /** Writes the payload of {@code f} (not its type and length) for {@code wireVersion}. */
    static void writePayload(WireWriter w, Frame f, int wireVersion) {
        if (f instanceof ReqHeader h) {
            w.str(h.clientId()).i32(h.schemaVersion());
            if (WireVersion.hasLogEpoch(wireVersion)) {
                w.present(h.logEpoch() != null);
                if (h.logEpoch() != null) w.str(h.logEpoch());
            } else if (h.logEpoch() != null) {
                throw new IllegalArgumentException("REQ_HEADER.logEpoch needs wire version ≥ 2");
            }
        } else if (f instanceof PushCommit p) {
            w.str(p.clientCommitId()).u32(p.operations().size());
            for (PushCommit.Operation o : p.operations()) {
                w.str(o.table()).str(o.rowId()).u8(o.op().code());
                optI64(w, o.baseVersion());
                w.present(o.payload() != null);
                if (o.payload() != null) w.bytes(o.payload());
            }
        } else if (f instanceof PullHeader p) {
            w.i32(p.limitCommits()).i32(p.limitSnapshotRows()).i32(p.maxSnapshotPages()).u8(p.accept());
        } else if (f instanceof Subscription s) {
            w.str(s.id()).str(s.table()).scopeLists(s.scopes());
            optStr(w, s.paramsJson());
            w.i64(s.cursor());
            optStr(w, s.bootstrapStateJson());
        } else if (f instanceof RespHeader h) {
            optI32(w, h.requiredSchemaVersion());
            optI32(w, h.latestSchemaVersion());
            if (WireVersion.hasLogEpoch(wireVersion)) {
                if (h.logEpoch() == null) throw new IllegalArgumentException("RESP_HEADER.logEpoch and resetRequired are required on wire ≥ 2");
                w.str(h.logEpoch()).bool(h.resetRequired());
            } else if (h.logEpoch() != null) {
                throw new IllegalArgumentException("RESP_HEADER epoch fields need wire version ≥ 2");
            }
        } else if (f instanceof Lease l) {
            w.str(l.leaseId()).i64(l.expiresAtMs());
        } else if (f instanceof PushResult p) {
            w.str(p.clientCommitId()).u8(p.status().code());
            optI64(w, p.commitSeq());
            w.u32(p.results().size());
            for (PushResult.OpResult o : p.results()) {
                w.i32(o.opIndex()).u8(o.statusCode());
                if (o instanceof PushResult.Conflict c) {
                    w.str(c.code()).str(c.message()).i64(c.serverVersion()).bytes(c.serverRow());
                    if (WireVersion.hasConflictColumns(wireVersion)) {
                        if (c.conflictColumns() == null) {
                            throw new IllegalArgumentException("PUSH_RESULT.conflict.conflictColumns is required on wire "
                                    + "version " + wireVersion);
                        }
                        w.bytes(c.conflictColumns());
                    } // wire 1 and 2 have no such field: whatever the record holds is not written
                } else if (o instanceof PushResult.OpError e) {
                    w.str(e.code()).str(e.message()).bool(e.retryable());
                }
            }
        } else if (f instanceof PushResultDetails d) {
            w.str(d.clientCommitId()).u32(d.entries().size());
            for (PushResultDetails.Entry e : d.entries()) w.i32(e.opIndex()).str(e.details().toJson());
        } else if (f instanceof SubStart s) {
            w.str(s.id()).u8(s.status().code()).str(s.reasonCode()).scopeLists(s.effectiveScopes()).bool(s.bootstrap());
        } else if (f instanceof CommitFrame c) {
            w.i64(c.commitSeq()).i64(c.createdAtMs()).str(c.actorId()).u32(c.tables().size());
            for (String t : c.tables()) w.str(t);
            w.u32(c.changes().size());
            for (CommitFrame.Change ch : c.changes()) {
                w.u16(ch.tableIndex()).str(ch.rowId()).u8(ch.op().code());
                optI64(w, ch.rowVersion());
                w.stringMap(ch.scopes());
                w.present(ch.row() != null);
                if (ch.row() != null) w.bytes(ch.row());
            }
        } else if (f instanceof SegmentRef s) {
            w.str(s.segmentId()).u8(s.mediaType().code()).str(s.table()).i64(s.byteLength()).i64(s.rowCount())
                    .i64(s.asOfCommitSeq()).str(s.scopeDigest());
            optStr(w, s.rowCursor());
            optStr(w, s.nextRowCursor());
            optStr(w, s.url());
            optI64(w, s.urlExpiresAtMs());
        } else if (f instanceof SegmentInline s) {
            w.raw(s.payload());
        } else if (f instanceof SubEnd s) {
            w.i64(s.nextCursor());
            optStr(w, s.bootstrapStateJson());
        } else if (f instanceof ErrorFrame e) {
            w.str(e.code()).str(e.message()).str(e.category()).bool(e.retryable()).str(e.recommendedAction());
            optStr(w, e.detailsJson());
        } else if (f instanceof UnknownFrame u) {
            w.raw(u.payload());
        } else {
            throw new IllegalArgumentException("not a frame: " + f);
        }
    }

    private static void optStr(WireWriter w, String s) {
        w.present(s != null);
        if (s != null) w.str(s);
    }

    private static void optI64(WireWriter w, Long v) {
        w.present(v != null);
        if (v != null) w.i64(v);
    }

    private static void optI32(WireWriter w, Integer v) {
        w.present(v != null);
        if (v != null) w.i32(v);
    }
}

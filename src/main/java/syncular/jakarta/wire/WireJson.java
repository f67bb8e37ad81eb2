package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The §11 canonical JSON debug rendering of messages and rows segments — contractual only for the golden vectors.
 * Frames in wire order, END omitted; fields in the SPEC table order; absent {@code opt} fields omitted (never null);
 * binary fields (row, payload, serverRow, SEGMENT_INLINE payload, unknown payloads, bytes/crdt values) as standard
 * padded base64; enums by name; {@code accept} numeric; i64 as numbers; {@code json} fields and json/blob_ref values
 * embedded parsed; NaN and ±Infinity as null. The result is a tree of Map/List/String/Number/Boolean/null for
 * {@link Json#write}.
 *
 * <p>Wire 3 (SPEC @008c36d5 §11.1): a conflict record renders {@code conflictColumns} as base64 after
 * {@code serverRow}; a sparse row (vector kind {@code push}, rule 11) renders through {@link #renderSparseRow}.
 */
public final class WireJson {
    /** {@link #frame(Frame)}'s "no message": render every field the record holds. */
    private static final int NO_VERSION = -1;

    private WireJson() { }

    public static Map<String, Object> render(RequestMessage m) {
        List<Object> frames = new ArrayList<>(m.frames().size());
        for (RequestFrame f : m.frames()) frames.add(frame(f, m.wireVersion()));
        return envelope(m.wireVersion(), MsgKind.REQUEST, frames);
    }

    public static Map<String, Object> render(ResponseMessage m) {
        List<Object> frames = new ArrayList<>(m.frames().size());
        for (ResponseFrame f : m.frames()) frames.add(frame(f, m.wireVersion()));
        return envelope(m.wireVersion(), MsgKind.RESPONSE, frames);
    }

    /** The rendering as JSON text. */
    public static String toText(Object rendered) { return Json.write(rendered); }

    private static Map<String, Object> envelope(int wireVersion, MsgKind kind, List<Object> frames) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("magic", "SSP2");
        out.put("wireVersion", wireVersion);
        out.put("msgKind", kind.jsonName());
        out.put("frames", frames);
        return out;
    }

    static String b64(byte[] b) { return Base64.getEncoder().encodeToString(b); }

    /** A json field embedded parsed; text beyond the tree parser's nesting limit is embedded verbatim (still valid). */
    private static Object parsed(String json) {
        try {
            return Json.parse(json);
        } catch (Json.JsonException e) {
            return new Json.RawJson(json.strip());
        }
    }

    /** One frame's rendering, with no message around it: a field renders when the record holds it. */
    public static Map<String, Object> frame(Frame f) { return frame(f, NO_VERSION); }

    /** One frame's rendering as it travels in {@code wireVersion}: fields the version lacks are left out. */
    public static Map<String, Object> frame(Frame f, int wireVersion) {
        Map<String, Object> o = new LinkedHashMap<>();
        if (f instanceof UnknownFrame u) {
            o.put("type", "UNKNOWN");
            o.put("frameType", u.frameType());
            o.put("payload", b64(u.payload()));
            return o;
        }
        o.put("type", FrameType.forCode(f.frameType()).get().name());
        if (f instanceof ReqHeader h) {
            o.put("clientId", h.clientId());
            o.put("schemaVersion", h.schemaVersion());
            putOpt(o, "logEpoch", h.logEpoch());
        } else if (f instanceof PushCommit p) {
            o.put("clientCommitId", p.clientCommitId());
            List<Object> ops = new ArrayList<>();
            for (PushCommit.Operation op : p.operations()) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("table", op.table());
                x.put("rowId", op.rowId());
                x.put("op", op.op().jsonName());
                putOpt(x, "baseVersion", op.baseVersion());
                if (op.payload() != null) x.put("payload", b64(op.payload()));
                ops.add(x);
            }
            o.put("operations", ops);
        } else if (f instanceof PullHeader p) {
            o.put("limitCommits", p.limitCommits());
            o.put("limitSnapshotRows", p.limitSnapshotRows());
            o.put("maxSnapshotPages", p.maxSnapshotPages());
            o.put("accept", p.accept());
        } else if (f instanceof Subscription s) {
            o.put("id", s.id());
            o.put("table", s.table());
            o.put("scopes", s.scopes());
            if (s.paramsJson() != null) o.put("params", parsed(s.paramsJson()));
            o.put("cursor", s.cursor());
            if (s.bootstrapStateJson() != null) o.put("bootstrapState", parsed(s.bootstrapStateJson()));
        } else if (f instanceof RespHeader h) {
            putOpt(o, "requiredSchemaVersion", h.requiredSchemaVersion());
            putOpt(o, "latestSchemaVersion", h.latestSchemaVersion());
            putOpt(o, "logEpoch", h.logEpoch());
            putOpt(o, "resetRequired", h.resetRequired());
        } else if (f instanceof Lease l) {
            o.put("leaseId", l.leaseId());
            o.put("expiresAtMs", l.expiresAtMs());
        } else if (f instanceof PushResult p) {
            o.put("clientCommitId", p.clientCommitId());
            o.put("status", p.status().jsonName());
            putOpt(o, "commitSeq", p.commitSeq());
            List<Object> rs = new ArrayList<>();
            for (PushResult.OpResult r : p.results()) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("opIndex", r.opIndex());
                if (r instanceof PushResult.Applied) {
                    x.put("status", "applied");
                } else if (r instanceof PushResult.Conflict c) {
                    x.put("status", "conflict");
                    x.put("code", c.code());
                    x.put("message", c.message());
                    x.put("serverVersion", c.serverVersion());
                    x.put("serverRow", b64(c.serverRow()));
                    if (c.conflictColumns() != null
                            && (wireVersion == NO_VERSION || WireVersion.hasConflictColumns(wireVersion))) {
                        x.put("conflictColumns", b64(c.conflictColumns()));
                    }
                } else if (r instanceof PushResult.OpError e) {
                    x.put("status", "error");
                    x.put("code", e.code());
                    x.put("message", e.message());
                    x.put("retryable", e.retryable());
                }
                rs.add(x);
            }
            o.put("results", rs);
        } else if (f instanceof PushResultDetails d) {
            o.put("clientCommitId", d.clientCommitId());
            List<Object> es = new ArrayList<>();
            for (PushResultDetails.Entry e : d.entries()) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("opIndex", e.opIndex());
                x.put("details", e.details().toJsonValue());
                es.add(x);
            }
            o.put("entries", es);
        } else if (f instanceof SubStart s) {
            o.put("id", s.id());
            o.put("status", s.status().jsonName());
            o.put("reasonCode", s.reasonCode());
            o.put("effectiveScopes", s.effectiveScopes());
            o.put("bootstrap", s.bootstrap());
        } else if (f instanceof CommitFrame c) {
            o.put("commitSeq", c.commitSeq());
            o.put("createdAtMs", c.createdAtMs());
            o.put("actorId", c.actorId());
            o.put("tables", c.tables());
            List<Object> cs = new ArrayList<>(c.changes().size());
            for (CommitFrame.Change ch : c.changes()) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("tableIndex", ch.tableIndex());
                x.put("rowId", ch.rowId());
                x.put("op", ch.op().jsonName());
                putOpt(x, "rowVersion", ch.rowVersion());
                x.put("scopes", ch.scopes());
                if (ch.row() != null) x.put("row", b64(ch.row()));
                cs.add(x);
            }
            o.put("changes", cs);
        } else if (f instanceof SegmentRef s) {
            o.put("segmentId", s.segmentId());
            o.put("mediaType", s.mediaType().jsonName());
            o.put("table", s.table());
            o.put("byteLength", s.byteLength());
            o.put("rowCount", s.rowCount());
            o.put("asOfCommitSeq", s.asOfCommitSeq());
            o.put("scopeDigest", s.scopeDigest());
            putOpt(o, "rowCursor", s.rowCursor());
            putOpt(o, "nextRowCursor", s.nextRowCursor());
            putOpt(o, "url", s.url());
            putOpt(o, "urlExpiresAtMs", s.urlExpiresAtMs());
        } else if (f instanceof SegmentInline s) {
            o.put("payload", b64(s.payload()));
        } else if (f instanceof SubEnd s) {
            o.put("nextCursor", s.nextCursor());
            if (s.bootstrapStateJson() != null) o.put("bootstrapState", parsed(s.bootstrapStateJson()));
        } else if (f instanceof ErrorFrame e) {
            o.put("code", e.code());
            o.put("message", e.message());
            o.put("category", e.category());
            o.put("retryable", e.retryable());
            o.put("recommendedAction", e.recommendedAction());
            if (e.detailsJson() != null) o.put("details", parsed(e.detailsJson()));
        }
        return o;
    }

    private static void putOpt(Map<String, Object> o, String key, Object v) {
        if (v != null) o.put(key, v);
    }

    /** §11 rule 8: the rendering of a rows segment. */
    public static Map<String, Object> render(RowsSegment s) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("magic", "SSG2");
        o.put("formatVersion", RowsSegment.FORMAT_VERSION);
        o.put("table", s.table());
        o.put("schemaVersion", s.schemaVersion());
        o.put("columns", columnObjects(s.columns()));
        List<Object> blocks = new ArrayList<>();
        for (List<RowsSegment.Row> block : s.blocks()) {
            List<Object> rows = new ArrayList<>(block.size());
            for (RowsSegment.Row r : block) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("serverVersion", r.serverVersion());
                x.put("values", rowValues(s.columns(), r.values()));
                rows.add(x);
            }
            blocks.add(rows);
        }
        o.put("blocks", blocks);
        return o;
    }

    /**
     * §11.1 rule 11 (SPEC @008c36d5): a sparse row as {@code {"columns":[…],"values":{…}}} — every column of the
     * table as a rule-8 column object, and {@code values} keyed by name holding only the present columns, in
     * declaration order, with rule-8 value rules; a present NULL renders as {@code null}, an absent column has no key.
     */
    public static Map<String, Object> renderSparseRow(List<ColumnDescriptor> columns, SparseRow row) {
        if (row.columnCount() != columns.size()) {
            throw new IllegalArgumentException("sparse row of " + row.columnCount() + " columns for " + columns.size());
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
            if (row.isPresent(i)) values.put(columns.get(i).name(), value(columns.get(i), row.value(i)));
        }
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("columns", columnObjects(columns));
        o.put("values", values);
        return o;
    }

    /** Rule 8's column table: {@code {"name":…,"type":<type name>,"nullable":…}} per column. */
    private static List<Object> columnObjects(List<ColumnDescriptor> columns) {
        List<Object> cols = new ArrayList<>(columns.size());
        for (ColumnDescriptor c : columns) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("name", c.name());
            x.put("type", c.type().schemaName());
            x.put("nullable", c.nullable());
            cols.add(x);
        }
        return cols;
    }

    /** One row as {@code {column: value}} per §11 (also handy for debugging decoded rows). */
    public static Map<String, Object> rowValues(List<ColumnDescriptor> columns, Object[] values) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) out.put(columns.get(i).name(), value(columns.get(i), values[i]));
        return out;
    }

    /** One column value by rule 8: NULL as null, bytes/crdt as base64, json/blob_ref parsed. */
    private static Object value(ColumnDescriptor c, Object v) {
        if (v == null) return null;
        if (v instanceof byte[] b) return b64(b);
        if (v instanceof Float64Bits f) return f.value();
        if ((c.type() == TypeTag.JSON || c.type() == TypeTag.BLOB_REF) && v instanceof String s) return parsed(s);
        return v;
    }
}

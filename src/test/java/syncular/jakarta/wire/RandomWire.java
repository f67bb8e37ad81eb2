package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Builds random <em>valid</em> messages and segments from a seed (the property tests draw the seed from jqwik), so
 * every generated value obeys the grammar, presence ties and value rules and must round-trip exactly.
 */
final class RandomWire {
    private static final String[] ALPHABET = {"a", "b", "z", "0", "-", "_", " ", "é", "ß", "€", "\uD83D\uDE00", "\uD834\uDD1E",
            "\u0000", "\n", "\"", "\\", "\uFFFF", "\uE000", "中"};
    private final Random r;

    RandomWire(long seed) { r = new Random(seed); }

    String str(int maxLen) {
        int n = r.nextInt(maxLen + 1);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(ALPHABET[r.nextInt(ALPHABET.length)]);
        return sb.toString();
    }

    String nonEmpty(int maxLen) {
        String s = str(maxLen);
        return s.isEmpty() ? "x" : s;
    }

    long safe() {
        switch (r.nextInt(5)) {
            case 0: return WireReader.MAX_SAFE;
            case 1: return -WireReader.MAX_SAFE;
            case 2: return -1;
            case 3: return r.nextInt(1000);
            default: return (r.nextLong() >> 11) % WireReader.MAX_SAFE;
        }
    }

    byte[] bytes(int max) {
        byte[] b = new byte[r.nextInt(max + 1)];
        r.nextBytes(b);
        return b;
    }

    String json() {
        switch (r.nextInt(6)) {
            case 0: return "null";
            case 1: return " 7 ";
            case 2: return "\"" + "x" + "\"";
            case 3: return "{\"a\": [1, 2.5e3, true], \"b\": {\"c\": null}}";
            case 4: return "[]";
            default: return "{\"asOfCommitSeq\":" + r.nextInt(100) + ",\"tables\":[\"t\"],\"tableIndex\":0,\"rowCursor\":null}";
        }
    }

    Map<String, List<String>> scopes() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
            List<String> l = new ArrayList<>();
            int k = r.nextInt(3);
            for (int j = 0; j < k; j++) l.add(str(6));
            m.put(str(6), l);
        }
        return m;
    }

    Map<String, String> stringMap() {
        Map<String, String> m = new LinkedHashMap<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) m.put(str(5), str(8));
        return m;
    }

    <T> T maybe(T v) { return r.nextBoolean() ? v : null; }

    int wireVersion() { return WireVersion.MIN + r.nextInt(WireVersion.MAX - WireVersion.MIN + 1); }

    UnknownFrame unknown() {
        int[] codes = {0x17, 0x18, 0x1A, 0x1C, 0x20, 0x2F, 0x30, 0x7F, 0xFF};
        return new UnknownFrame(codes[r.nextInt(codes.length)], bytes(12));
    }

    RequestMessage request() {
        int v = wireVersion();
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(new ReqHeader(nonEmpty(10), 1 + r.nextInt(50), WireVersion.hasLogEpoch(v) ? maybe(nonEmpty(8)) : null));
        int pushes = r.nextInt(3);
        boolean pull = pushes == 0 || r.nextBoolean();
        for (int i = 0; i < pushes; i++) {
            if (r.nextInt(4) == 0) frames.add(unknown());
            List<PushCommit.Operation> ops = new ArrayList<>();
            int n = 1 + r.nextInt(3);
            for (int j = 0; j < n; j++) {
                ops.add(r.nextBoolean()
                        ? PushCommit.Operation.upsert(str(6), str(6), maybe(safe()), bytes(20))
                        : PushCommit.Operation.delete(str(6), str(6), maybe(safe())));
            }
            frames.add(new PushCommit(nonEmpty(8), ops));
        }
        if (pull) {
            frames.add(new PullHeader(r.nextInt(), r.nextInt(), r.nextInt(), r.nextInt(16)));
            int subs = r.nextInt(3);
            for (int i = 0; i < subs; i++) {
                if (r.nextInt(4) == 0) frames.add(unknown());
                frames.add(new Subscription(str(6), str(6), scopes(), maybe(json()), safe(), maybe(json())));
            }
        }
        return new RequestMessage(v, frames);
    }

    ResponseMessage response() {
        int v = wireVersion();
        List<ResponseFrame> frames = new ArrayList<>();
        Integer req = maybe(r.nextInt());
        Integer latest = maybe(r.nextInt());
        frames.add(WireVersion.hasLogEpoch(v) ? RespHeader.v2(req, latest, nonEmpty(8), r.nextBoolean()) : RespHeader.v1(req, latest));
        if (r.nextBoolean()) frames.add(new Lease(nonEmpty(8), safe()));
        int pushes = r.nextInt(3);
        for (int i = 0; i < pushes; i++) {
            PushResult.Status st = PushResult.Status.values()[r.nextInt(3)];
            List<PushResult.OpResult> results = new ArrayList<>();
            int n = r.nextInt(3);
            for (int j = 0; j < n; j++) {
                switch (r.nextInt(3)) {
                    case 0: results.add(new PushResult.Applied(j)); break;
                    case 1:
                        // wire 3 requires the evidence bitmap (any bytes: the envelope codec cannot check them)
                        results.add(new PushResult.Conflict(j, str(5), str(10), safe(), bytes(10),
                                WireVersion.hasConflictColumns(v) ? bytes(3) : null));
                        break;
                    default: results.add(new PushResult.OpError(j, str(5), str(10), r.nextBoolean())); break;
                }
            }
            String id = nonEmpty(6);
            frames.add(new PushResult(id, st, st == PushResult.Status.REJECTED ? null : safe(), results));
            if (st == PushResult.Status.REJECTED) {
                for (PushResult.OpResult o : results) {
                    if (o instanceof PushResult.OpError && r.nextBoolean()) {
                        frames.add(new PushResultDetails(id, List.of(new PushResultDetails.Entry(o.opIndex(),
                                new RejectionDetails(List.of("a.b", "c"), "outside_day", "edit-fields", Map.of("z", "1", "a", "2"))))));
                        break;
                    }
                }
            }
        }
        int subs = r.nextInt(3);
        boolean error = r.nextInt(5) == 0;
        for (int i = 0; i < subs; i++) {
            frames.add(new SubStart(str(5), SubStart.Status.values()[r.nextInt(3)], str(8), scopes(), r.nextBoolean()));
            int k = r.nextInt(3);
            boolean segments = r.nextBoolean();
            for (int j = 0; j < k; j++) {
                if (r.nextInt(5) == 0) frames.add(unknown());
                if (!segments) {
                    frames.add(commit());
                } else if (r.nextBoolean()) {
                    String url = maybe(str(20));
                    frames.add(new SegmentRef("sha256:" + str(8), SegmentRef.MediaType.values()[r.nextInt(2)], str(5), safe(),
                            safe(), safe(), str(8), maybe(str(5)), maybe(str(5)), url, url == null ? null : safe()));
                } else {
                    frames.add(new SegmentInline(RowsSegmentEncoder.encode(segment(3))));
                }
            }
            if (error && i == subs - 1 && r.nextBoolean()) break; // ERROR may interrupt an open section
            frames.add(new SubEnd(safe(), maybe(json())));
        }
        if (error) frames.add(ErrorFrame.of(ErrorCode.values()[r.nextInt(ErrorCode.values().length)], str(10), maybe(json())));
        return new ResponseMessage(v, frames);
    }

    CommitFrame commit() {
        List<String> tables = new ArrayList<>();
        int nt = 1 + r.nextInt(3);
        for (int i = 0; i < nt; i++) tables.add(str(5));
        List<CommitFrame.Change> changes = new ArrayList<>();
        int nc = r.nextInt(4);
        for (int i = 0; i < nc; i++) {
            changes.add(r.nextBoolean()
                    ? CommitFrame.Change.upsert(r.nextInt(nt), str(6), safe(), stringMap(), bytes(16))
                    : CommitFrame.Change.delete(r.nextInt(nt), str(6), stringMap()));
        }
        return new CommitFrame(safe(), safe(), str(6), tables, changes);
    }

    List<ColumnDescriptor> columns() { return columns(0); }

    /** Random columns, at least {@code min} of them. */
    List<ColumnDescriptor> columns(int min) {
        List<ColumnDescriptor> cols = new ArrayList<>();
        int n = min + r.nextInt(12);
        for (int i = 0; i < n; i++) cols.add(new ColumnDescriptor(str(5), TypeTag.values()[r.nextInt(8)], r.nextBoolean()));
        return cols;
    }

    Object value(ColumnDescriptor c) {
        if (c.nullable() && r.nextInt(4) == 0) return null;
        switch (c.type()) {
            case STRING: return str(10);
            case INTEGER: return safe();
            case FLOAT: {
                long[] specials = {0x7ff8000000000001L, 0x7ff0000000000000L, 0x8000000000000000L, 0xfff0000000000000L};
                return r.nextInt(4) == 0 ? new Float64Bits(specials[r.nextInt(specials.length)]) : new Float64Bits(r.nextLong());
            }
            case BOOLEAN: return r.nextBoolean();
            case JSON: return json();
            case BLOB_REF: return new BlobRef("sha256:" + "0123456789abcdef".repeat(4), safe() & WireReader.MAX_SAFE,
                    maybe(str(5)), maybe(str(5))).toJson();
            default: return bytes(10);
        }
    }

    int nextInt(int bound) { return r.nextInt(bound); }

    /** A random valid sparse row over {@code cols} (SPEC @008c36d5 §2.4): the primary key always present. */
    SparseRow sparseRow(List<ColumnDescriptor> cols, int primaryKeyIndex) {
        boolean[] present = new boolean[cols.size()];
        Object[] values = new Object[cols.size()];
        boolean all = r.nextInt(4) == 0;
        for (int i = 0; i < present.length; i++) {
            present[i] = all || i == primaryKeyIndex || r.nextBoolean();
            if (present[i]) values[i] = value(cols.get(i));
        }
        return new SparseRow(present, values);
    }

    RowsSegment segment(int maxRows) {
        List<ColumnDescriptor> cols = columns();
        List<List<RowsSegment.Row>> blocks = new ArrayList<>();
        int nb = r.nextInt(3);
        for (int b = 0; b < nb; b++) {
            List<RowsSegment.Row> rows = new ArrayList<>();
            int n = 1 + r.nextInt(maxRows);
            for (int i = 0; i < n; i++) {
                Object[] v = new Object[cols.size()];
                for (int c = 0; c < v.length; c++) v[c] = value(cols.get(c));
                rows.add(new RowsSegment.Row(1 + (safe() & 0xffffffffL), v));
            }
            blocks.add(rows);
        }
        return new RowsSegment(str(6), r.nextInt(), cols, blocks);
    }
}

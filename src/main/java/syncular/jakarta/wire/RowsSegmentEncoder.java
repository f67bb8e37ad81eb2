package syncular.jakarta.wire;

import java.io.ByteArrayOutputStream;
import java.util.List;

/** Encodes an in-memory {@link RowsSegment}, keeping its block structure exactly (SPEC §5.2). */
public final class RowsSegmentEncoder {
    private RowsSegmentEncoder() { }

    public static byte[] encode(RowsSegment s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        RowsSegmentWriter w = new RowsSegmentWriter(out, s.table(), s.schemaVersion(), s.columns(), Integer.MAX_VALUE,
                Integer.MAX_VALUE);
        for (List<RowsSegment.Row> block : s.blocks()) {
            for (RowsSegment.Row r : block) w.writeRow(r.serverVersion(), r.values());
            w.flushBlock();
        }
        w.finish();
        return out.toByteArray();
    }
}

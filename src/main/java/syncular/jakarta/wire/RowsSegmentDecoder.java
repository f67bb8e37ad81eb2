package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Strict SSG2 rows-segment decoder (SPEC §5.2). Any structural failure — magic, format version, flags, column flag
 * bits, unknown type tag, a block's byteLength not matching its rows, serverVersion &lt; 1, a row-codec violation,
 * truncation, a missing end marker, bytes after it — is {@code sync.invalid_request}. Comparing the column table with
 * the receiver's schema ({@code sync.schema_mismatch}) is the receiver's job. Stateless and thread-safe.
 */
public final class RowsSegmentDecoder {
    static final byte[] MAGIC = {0x53, 0x53, 0x47, 0x32}; // "SSG2"

    private RowsSegmentDecoder() { }

    /** Receives decoded rows block by block; see {@link #decode(byte[], int, int, RowSink)}. */
    public interface RowSink {
        /** Called once, after the column table. */
        default void header(String table, int schemaVersion, List<ColumnDescriptor> columns) { }

        default void startBlock(int rowCount) { }

        void row(long serverVersion, Object[] values);

        default void endBlock() { }
    }

    /** Decodes a whole segment into memory (FLOAT values as {@link Double}). */
    public static RowsSegment decode(byte[] segment) { return decode(segment, false); }

    /** Decodes a whole segment into memory; {@code lossless} yields FLOAT values as {@link Float64Bits}. */
    public static RowsSegment decode(byte[] segment, boolean lossless) {
        List<List<RowsSegment.Row>> blocks = new ArrayList<>();
        String[] table = new String[1];
        int[] schemaVersion = new int[1];
        @SuppressWarnings("unchecked")
        List<ColumnDescriptor>[] cols = new List[1];
        decode(segment, 0, segment.length, lossless, new RowSink() {
            List<RowsSegment.Row> block;

            @Override public void header(String t, int v, List<ColumnDescriptor> c) {
                table[0] = t;
                schemaVersion[0] = v;
                cols[0] = c;
            }

            @Override public void startBlock(int rowCount) {
                block = new ArrayList<>(rowCount);
                blocks.add(block);
            }

            @Override public void row(long serverVersion, Object[] values) {
                block.add(new RowsSegment.Row(serverVersion, values));
            }
        });
        return new RowsSegment(table[0], schemaVersion[0], cols[0], blocks);
    }

    /** Streams the rows of a segment to {@code sink} (FLOAT values as {@link Double}). */
    public static void decode(byte[] b, int off, int len, RowSink sink) { decode(b, off, len, false, sink); }

    /** Checks the structure of a segment without keeping its rows (SEGMENT_INLINE, SPEC §5.7). */
    public static void validate(byte[] b, int off, int len) {
        decode(b, off, len, true, (v, values) -> { });
    }

    static void decode(byte[] b, int off, int len, boolean lossless, RowSink sink) {
        WireReader r = new WireReader(b, off, len);
        r.need(4, "SSG2 magic");
        for (int i = 0; i < 4; i++) {
            if (b[off + i] != MAGIC[i]) throw DecodeException.invalid("SSG2 magic is not SSG2");
        }
        r.raw(4, "SSG2 magic");
        int format = r.u16("SSG2 formatVersion");
        if (format != RowsSegment.FORMAT_VERSION) throw DecodeException.invalid("unsupported SSG2 formatVersion " + format);
        if (r.u16("SSG2 flags") != 0) throw DecodeException.invalid("SSG2 flags must be 0");
        String table = r.str("SSG2 table");
        int schemaVersion = r.i32("SSG2 schemaVersion");
        int nc = r.u16("SSG2 columns");
        r.need(6L * nc, "SSG2 columns");
        List<ColumnDescriptor> columns = new ArrayList<>(nc);
        for (int i = 0; i < nc; i++) {
            String name = r.str("SSG2 column name");
            int tag = r.u8("SSG2 column type");
            TypeTag type = TypeTag.forCode(tag).orElseThrow(() -> DecodeException.invalid("SSG2 column " + columns.size()
                    + ": unknown type tag " + tag));
            int flags = r.u8("SSG2 column flags");
            if ((flags & 0xfe) != 0) throw DecodeException.invalid("SSG2 column " + i + ": reserved flag bits set");
            columns.add(new ColumnDescriptor(name, type, flags == 1));
        }
        List<ColumnDescriptor> cols = List.copyOf(columns);
        sink.header(table, schemaVersion, cols);
        int minRowBytes = 8 + ((nc + 7) >>> 3);
        while (true) {
            if (r.remaining() < 4) throw DecodeException.invalid("SSG2 truncated: missing end marker");
            long rowCount = r.u32("SSG2 block rowCount");
            if (rowCount == 0) {
                r.expectEnd("SSG2 end marker");
                return;
            }
            long byteLength = r.u32("SSG2 block byteLength");
            r.need(byteLength, "SSG2 block rows");
            if (rowCount * minRowBytes > byteLength) {
                throw DecodeException.invalid("SSG2 block of " + rowCount + " rows cannot fit in " + byteLength + " bytes");
            }
            int blockAt = r.absolutePosition();
            WireReader br = new WireReader(b, blockAt, (int) byteLength);
            r.skip(byteLength, "SSG2 block rows");
            sink.startBlock((int) rowCount);
            for (long i = 0; i < rowCount; i++) {
                long serverVersion = br.i64("SSG2 row serverVersion");
                if (serverVersion < 1) throw DecodeException.invalid("SSG2 row serverVersion must be ≥ 1");
                sink.row(serverVersion, RowCodec.read(br, cols, lossless));
            }
            br.expectEnd("SSG2 block (byteLength does not match its rows)");
            sink.endBlock();
        }
    }
}

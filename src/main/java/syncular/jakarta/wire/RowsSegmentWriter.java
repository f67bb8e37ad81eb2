package syncular.jakarta.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Streams an SSG2 rows segment (SPEC §5.2) to an {@link OutputStream}: the header at construction, rows buffered into
 * blocks that are written when they reach the target (default 1,000 rows or 256 KiB, as the spec recommends; a row
 * that would push a block past the byte target opens the next one), and the {@code rowCount = 0} end marker on
 * {@link #finish()}. Only one block is held in memory. Not thread-safe.
 */
public final class RowsSegmentWriter {
    public static final int DEFAULT_BLOCK_ROWS = 1000;
    public static final int DEFAULT_BLOCK_BYTES = 256 * 1024;

    private final OutputStream out;
    private final List<ColumnDescriptor> columns;
    private final int blockRows;
    private final int blockBytes;
    private final WireWriter block = new WireWriter(64 * 1024);
    private final WireWriter head = new WireWriter(64);
    private int rowsInBlock;
    private long rowCount;
    private long bytesWritten;
    private boolean finished;

    public RowsSegmentWriter(OutputStream out, String table, int schemaVersion, List<ColumnDescriptor> columns) {
        this(out, table, schemaVersion, columns, DEFAULT_BLOCK_ROWS, DEFAULT_BLOCK_BYTES);
    }

    public RowsSegmentWriter(OutputStream out, String table, int schemaVersion, List<ColumnDescriptor> columns,
            int blockRows, int blockBytes) {
        if (blockRows < 1 || blockBytes < 1) throw new IllegalArgumentException("block targets must be ≥ 1");
        if (columns.size() > 0xffff) throw new IllegalArgumentException("SSG2 has at most 65535 columns");
        this.out = out;
        this.columns = List.copyOf(columns);
        this.blockRows = blockRows;
        this.blockBytes = blockBytes;
        WireWriter w = new WireWriter(64 + columns.size() * 16);
        w.raw(RowsSegmentDecoder.MAGIC).u16(RowsSegment.FORMAT_VERSION).u16(0).str(table).i32(schemaVersion)
                .u16(columns.size());
        for (ColumnDescriptor c : columns) w.str(c.name()).u8(c.type().code()).u8(c.nullable() ? 1 : 0);
        emit(w);
    }

    /** Appends one row; a full block is written out first. Bad values are {@link IllegalArgumentException}. */
    public RowsSegmentWriter writeRow(long serverVersion, Object[] values) {
        if (finished) throw new IllegalStateException("segment already finished");
        if (serverVersion < 1 || serverVersion > WireReader.MAX_SAFE) {
            throw new IllegalArgumentException("SSG2 serverVersion must be in [1, 2^53−1]");
        }
        int mark = block.size();
        block.i64(serverVersion);
        try {
            RowCodec.write(block, columns, values);
        } catch (IllegalArgumentException e) {
            block.truncate(mark);
            throw e;
        }
        rowsInBlock++;
        rowCount++;
        if (block.size() > blockBytes && rowsInBlock > 1) {
            // keep blocks within the byte target: this row opens the next block (a lone oversized row still goes)
            emitBlock(rowsInBlock - 1, mark);
            block.compactFrom(mark);
            rowsInBlock = 1;
        }
        if (rowsInBlock >= blockRows || block.size() >= blockBytes) flushBlock();
        return this;
    }

    private void emitBlock(int rows, int bytes) {
        head.reset();
        head.u32(rows).u32(bytes);
        emit(head);
        try {
            block.writeTo(out, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        bytesWritten += bytes;
    }

    /** Ends the current block early (e.g. to mirror a given block structure). */
    public RowsSegmentWriter flushBlock() {
        if (rowsInBlock == 0) return this;
        emitBlock(rowsInBlock, block.size());
        block.reset();
        rowsInBlock = 0;
        return this;
    }

    /** Writes the last block and the end marker; the stream is neither flushed nor closed. */
    public void finish() {
        if (finished) throw new IllegalStateException("segment already finished");
        flushBlock();
        head.reset();
        head.u32(0);
        emit(head);
        finished = true;
    }

    public long rowCount() { return rowCount; }

    /** Bytes handed to the stream so far (the segment's byteLength once finished). */
    public long bytesWritten() { return bytesWritten; }

    private void emit(WireWriter w) {
        try {
            w.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        bytesWritten += w.size();
    }
}

package syncular.jakarta.wire.bench;

import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.ResponseWriter;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.RowsSegmentWriter;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.TypeTag;

/**
 * Throughput of the wire codec (docs/benchmarks.md): a pull response of 1,000 COMMIT frames × 10 upserts of the demo
 * {@code todos} table, and a 100,000-row SSG2 segment of the same table. One op = one whole response or segment;
 * MB/s and frames (rows)/s follow from ops/s and the sizes printed at setup.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class WireCodecBenchmark {
    static final List<ColumnDescriptor> TODOS = List.of(
            new ColumnDescriptor("id", TypeTag.STRING, false),
            new ColumnDescriptor("list_id", TypeTag.STRING, false),
            new ColumnDescriptor("title", TypeTag.STRING, false),
            new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
            new ColumnDescriptor("position", TypeTag.INTEGER, false),
            new ColumnDescriptor("updated_at_ms", TypeTag.INTEGER, false));

    ResponseMessage pull;
    byte[] pullBytes;
    List<Object[]> segmentRows;
    byte[] segmentBytes;

    static Object[] todo(int i) {
        return new Object[] {"todo-" + String.format("%07d", i), "list-" + (i % 50), "Buy oat milk and bread #" + i,
                i % 3 == 0, (long) i * 1024, 1782993600000L + i};
    }

    @Setup
    public void setup() {
        List<ResponseFrame> frames = new ArrayList<>();
        frames.add(RespHeader.v2(null, 1, "epoch-1", false));
        frames.add(SubStart.active("sub-todos", Map.of("list_id", List.of("list-1", "list-2")), false));
        for (int c = 0; c < 1000; c++) {
            List<CommitFrame.Change> changes = new ArrayList<>(10);
            for (int k = 0; k < 10; k++) {
                int i = c * 10 + k;
                changes.add(CommitFrame.Change.upsert(0, "todo-" + i, 1 + (i % 17), Map.of("list_id", "list-" + (i % 50)),
                        RowCodec.encode(TODOS, todo(i))));
            }
            frames.add(new CommitFrame(1 + c, 1782993600000L + c, "actor-" + (c % 5), List.of("todos"), changes));
        }
        frames.add(new SubEnd(1000, null));
        pull = new ResponseMessage(2, frames);
        CountingStream cs = new CountingStream();
        ResponseWriter w = new ResponseWriter(cs, 2);
        java.io.ByteArrayOutputStream bo = new java.io.ByteArrayOutputStream();
        ResponseWriter w2 = new ResponseWriter(bo, 2);
        for (ResponseFrame f : frames) {
            w.write(f);
            w2.write(f);
        }
        w.end();
        w2.end();
        pullBytes = bo.toByteArray();

        segmentRows = new ArrayList<>(100_000);
        for (int i = 0; i < 100_000; i++) segmentRows.add(todo(i));
        java.io.ByteArrayOutputStream so = new java.io.ByteArrayOutputStream();
        RowsSegmentWriter sw = new RowsSegmentWriter(so, "todos", 1, TODOS);
        for (int i = 0; i < segmentRows.size(); i++) sw.writeRow(1 + (i % 9), segmentRows.get(i));
        sw.finish();
        segmentBytes = so.toByteArray();
        System.out.println("[bench] pull response: " + pullBytes.length + " bytes, " + frames.size()
                + " frames (+END); segment: " + segmentBytes.length + " bytes, 100000 rows");
    }

    @Benchmark
    public ResponseMessage decodePullResponse() {
        return ResponseDecoder.decode(pullBytes);
    }

    @Benchmark
    public long encodePullResponse() {
        CountingStream out = new CountingStream();
        ResponseWriter w = new ResponseWriter(out, 2);
        for (ResponseFrame f : pull.frames()) w.write(f);
        w.end();
        return out.count;
    }

    @Benchmark
    public void decodeSegment(Blackhole bh) {
        RowsSegmentDecoder.decode(segmentBytes, 0, segmentBytes.length, (serverVersion, values) -> bh.consume(values));
    }

    @Benchmark
    public long encodeSegment() {
        CountingStream out = new CountingStream();
        RowsSegmentWriter w = new RowsSegmentWriter(out, "todos", 1, TODOS);
        for (int i = 0; i < segmentRows.size(); i++) w.writeRow(1 + (i % 9), segmentRows.get(i));
        w.finish();
        return out.count;
    }

    /** A sink that only counts, so the benchmark measures the codec rather than a growing byte array. */
    static final class CountingStream extends OutputStream {
        long count;

        @Override public void write(int b) { count++; }

        @Override public void write(byte[] b, int off, int len) { count += len; }
    }
}

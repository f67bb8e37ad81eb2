package syncular.jakarta.sync.bench;

import java.util.List;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.RowCodec;

/** What the HTTP load drivers share: the demo schema's {@code todos} row and latency percentiles. */
public final class BenchSupport {
    /** The demo schema's todos table as the row codec sees it, from the schema the WAR ships. */
    public static final List<ColumnDescriptor> TODOS = SchemaCompiler
            .load("syncular/demo/syncular.ir.json", BenchSupport.class.getClassLoader())
            .table("todos").orElseThrow().descriptors();

    private BenchSupport() { }

    /** One encoded todos row. */
    public static byte[] todo(String id, String list, String title, boolean done, long position) {
        return RowCodec.encode(TODOS, new Object[] {id, list, title, done, position, 1_700_000_000_000L});
    }

    /** The {@code p} percentile (0–1, nearest rank) of ascending nanosecond values, in milliseconds. */
    public static double percentileMs(long[] sortedNanos, double p) {
        if (sortedNanos.length == 0) return 0;
        return sortedNanos[Math.min(sortedNanos.length - 1, (int) Math.ceil(p * sortedNanos.length) - 1)] / 1e6;
    }
}

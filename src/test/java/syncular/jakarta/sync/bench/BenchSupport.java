package syncular.jakarta.sync.bench;

import java.util.List;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.RowCodec;

/**
 * What the HTTP load drivers share: the demo schema's {@code todos} row, the reference load server's {@code tasks}
 * row, and latency percentiles.
 */
public final class BenchSupport {
    /** The demo schema's todos table as the row codec sees it, from the schema the WAR ships. */
    public static final List<ColumnDescriptor> TODOS = SchemaCompiler
            .load("syncular/demo/syncular.ir.json", BenchSupport.class.getClassLoader())
            .table("todos").orElseThrow().descriptors();

    /**
     * The upstream load server's {@code tasks} table ({@code load/src/fixture.ts} COLUMNS, in that order; the same
     * table as {@code src/bench/tasks.schema.json}, which our server is started with for the side-by-side run).
     */
    public static final String TASKS_SCHEMA_JSON = """
            {"version": 1, "tables": [{"name": "tasks", "primaryKey": "id",
              "columns": [{"name": "id", "type": "string", "nullable": false},
                          {"name": "project_id", "type": "string", "nullable": false},
                          {"name": "title", "type": "string", "nullable": false},
                          {"name": "done", "type": "boolean", "nullable": false},
                          {"name": "priority", "type": "integer", "nullable": false},
                          {"name": "updated_at_ms", "type": "integer", "nullable": false}],
              "scopes": [{"pattern": "project:{project_id}"}]}]}""";

    /** The tasks table as the row codec sees it. */
    public static final List<ColumnDescriptor> TASKS = SchemaCompiler.compile(TASKS_SCHEMA_JSON)
            .table("tasks").orElseThrow().descriptors();

    private BenchSupport() { }

    /** One encoded todos row. */
    public static byte[] todo(String id, String list, String title, boolean done, long position) {
        return RowCodec.encode(TODOS, new Object[] {id, list, title, done, position, 1_700_000_000_000L});
    }

    /** One encoded tasks row. */
    public static byte[] task(String id, String project, String title, boolean done, long priority, long updatedAtMs) {
        return RowCodec.encode(TASKS, new Object[] {id, project, title, done, priority, updatedAtMs});
    }

    /** {@code --key=value} arguments as a map; anything else is refused. */
    public static java.util.Map<String, String> options(String[] args) {
        java.util.Map<String, String> o = new java.util.HashMap<>();
        for (String a : args) {
            if (!a.startsWith("--") || !a.contains("=")) throw new IllegalArgumentException("not --key=value: " + a);
            o.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
        }
        return o;
    }

    /** The base URL a driver targets: {@code --url=}, by default our server started by {@code mvn -Prun}. */
    public static java.net.URI baseUrl(java.util.Map<String, String> options) {
        return java.net.URI.create(options.getOrDefault("url", "http://localhost:8787/syncular/"));
    }

    /** A whole-number {@code --key=value} option, or {@code otherwise}. */
    public static int intOption(java.util.Map<String, String> options, String key, int otherwise) {
        String v = options.get(key);
        return v == null ? otherwise : Integer.parseInt(v);
    }

    /** The {@code p} percentile (0–1, nearest rank) of ascending nanosecond values, in milliseconds. */
    public static double percentileMs(long[] sortedNanos, double p) {
        if (sortedNanos.length == 0) return 0;
        return sortedNanos[Math.min(sortedNanos.length - 1, (int) Math.ceil(p * sortedNanos.length) - 1)] / 1e6;
    }
}

package syncular.jakarta.wire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A decoded SSG2 rows segment (SPEC §5.2): table, schema version, its own column table, and row blocks in wire order
 * (a client applies each block in one transaction). Values follow {@link RowCodec}'s Java types.
 */
public record RowsSegment(String table, int schemaVersion, List<ColumnDescriptor> columns, List<List<Row>> blocks) {
    public static final int FORMAT_VERSION = 1;

    public RowsSegment {
        Checks.nonNull(table, "SSG2.table");
        columns = Checks.list(columns, "SSG2.columns");
        if (columns.size() > 0xffff) throw new IllegalArgumentException("SSG2 has at most 65535 columns");
        List<List<Row>> copy = new ArrayList<>(blocks.size());
        for (List<Row> b : blocks) {
            if (b.isEmpty()) throw new IllegalArgumentException("an SSG2 block holds at least one row");
            copy.add(Checks.list(b, "SSG2 block"));
        }
        blocks = Collections.unmodifiableList(copy);
    }

    public long rowCount() {
        long n = 0;
        for (List<Row> b : blocks) n += b.size();
        return n;
    }

    /** One row record: the row's {@code server_version} (≥ 1) and its values in column order. */
    public record Row(long serverVersion, Object[] values) {
        public Row {
            if (serverVersion < 1 || serverVersion > WireReader.MAX_SAFE) {
                throw new IllegalArgumentException("SSG2 serverVersion must be in [1, 2^53−1]");
            }
            if (values == null) throw new IllegalArgumentException("SSG2 row values are required");
        }
    }
}

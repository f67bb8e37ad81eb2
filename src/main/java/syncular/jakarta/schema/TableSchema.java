package syncular.jakarta.schema;

import java.util.List;
import java.util.Optional;
import syncular.jakarta.wire.ColumnDescriptor;

/** One table of a compiled schema: columns in wire order, the primary-key column, and its scope patterns. */
public record TableSchema(String name, String primaryKey, List<ColumnSchema> columns, List<ScopePattern> scopes) {
    public TableSchema {
        columns = List.copyOf(columns);
        scopes = List.copyOf(scopes);
    }

    /** The row codec's view of this table, in column order. */
    public List<ColumnDescriptor> descriptors() {
        return columns.stream().map(ColumnSchema::descriptor).toList();
    }

    public Optional<ColumnSchema> column(String columnName) {
        return columns.stream().filter(c -> c.name().equals(columnName)).findFirst();
    }

    /** Position of a column in wire order, or -1. */
    public int columnIndex(String columnName) {
        for (int i = 0; i < columns.size(); i++) if (columns.get(i).name().equals(columnName)) return i;
        return -1;
    }

    public int primaryKeyIndex() { return columnIndex(primaryKey); }

    public Optional<ScopePattern> scopeForVariable(String variable) {
        return scopes.stream().filter(s -> s.variable().equals(variable)).findFirst();
    }
}

package syncular.jakarta.schema;

import java.util.List;
import java.util.Optional;
import syncular.jakarta.wire.ColumnDescriptor;

/**
 * One table of a compiled schema: columns in wire order, the primary-key column, its scope patterns, and the
 * references it declares (SPEC §6.11), in declaration order. Each reference's column needs a non-unique index so a
 * parent delete finds the children; the schema file need not declare that index.
 */
public record TableSchema(String name, String primaryKey, List<ColumnSchema> columns, List<ScopePattern> scopes,
                          List<ColumnReference> references) {
    public TableSchema {
        columns = List.copyOf(columns);
        scopes = List.copyOf(scopes);
        references = List.copyOf(references);
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

    /** The reference a column declares, if any; a column declares at most one. */
    public Optional<ColumnReference> reference(String columnName) {
        return references.stream().filter(r -> r.column().equals(columnName)).findFirst();
    }
}

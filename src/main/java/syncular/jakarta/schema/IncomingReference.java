package syncular.jakarta.schema;

/**
 * A declared reference seen from its parent table (SPEC §6.11): rows of {@code childTable} whose {@code column}
 * names a parent row. A parent delete visits these to restrict, cascade or set null.
 */
public record IncomingReference(String childTable, String column, ColumnReference.OnDelete onDelete) { }

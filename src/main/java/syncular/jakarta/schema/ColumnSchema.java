package syncular.jakarta.schema;

import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.TypeTag;

/**
 * One column of a schema table. {@code crdtType}, {@code encrypted} and {@code declaredType} never reach the wire
 * (SPEC §2.4): an encrypted column is plain {@code bytes} there.
 */
public record ColumnSchema(String name, TypeTag type, boolean nullable, String crdtType, boolean encrypted,
                           String declaredType) {
    public ColumnDescriptor descriptor() { return new ColumnDescriptor(name, type, nullable); }
}

package syncular.jakarta.wire;

import java.util.Objects;

/**
 * A wire-level column: what the row codec and an SSG2 column table know of a column (SPEC §2.4, §5.2). The schema
 * package compiles a schema file into these, so the codec never depends on the schema model.
 */
public record ColumnDescriptor(String name, TypeTag type, boolean nullable) {
    public ColumnDescriptor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}

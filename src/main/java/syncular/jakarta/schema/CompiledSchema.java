package syncular.jakarta.schema;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** A validated schema at one version: the tables in declaration order (the bootstrap order, parents first). */
public record CompiledSchema(int version, List<TableSchema> tables) {
    public CompiledSchema {
        tables = List.copyOf(tables);
    }

    public Optional<TableSchema> table(String name) {
        return tables.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /** Every scope variable declared by some table (SPEC §3.2: a key declared by no table is invalid). */
    public Set<String> variables() {
        Set<String> vars = new LinkedHashSet<>();
        for (TableSchema t : tables) for (ScopePattern s : t.scopes()) vars.add(s.variable());
        return vars;
    }

    /**
     * The references that name {@code parentTable} (SPEC §6.11), self-references included: by child table in
     * schema order, then in each child's declaration order. Empty for a table no reference names, or an unknown one.
     */
    public List<IncomingReference> referencedBy(String parentTable) {
        List<IncomingReference> incoming = new ArrayList<>();
        for (TableSchema child : tables) {
            for (ColumnReference r : child.references()) {
                if (r.parentTable().equals(parentTable)) {
                    incoming.add(new IncomingReference(child.name(), r.column(), r.onDelete()));
                }
            }
        }
        return List.copyOf(incoming);
    }
}

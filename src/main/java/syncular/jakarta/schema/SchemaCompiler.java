package syncular.jakarta.schema;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import syncular.jakarta.schema.ColumnReference.OnDelete;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.TypeTag;

/**
 * Compiles a schema file into a {@link CompiledSchema}, refusing anything invalid with one message that names the
 * table and column (SPEC §2.4, §3.1, §6.11). Two forms are read:
 * <ul>
 *   <li>the {@code syncular.ir.json} the upstream generator writes ({@code irVersion} 1: {@code schemaVersion},
 *       {@code tables[].primaryKey/columns/scopes{pattern,variable,column}/references}; other members ignored);</li>
 *   <li>the compact conformance form {@code {version, tables:[{name, primaryKey, columns, scopes:[{pattern,
 *       column?}], references?}]}} where a scope's column defaults to its variable's name.</li>
 * </ul>
 * Both forms write a table's declared references the same way, {@code references:[{column, parentTable,
 * onDelete?}]}, and an absent {@code onDelete} means RESTRICT. The IR also lists the generated index over each
 * reference column under {@code indexes}; that member is ignored, and storage derives the index from the reference.
 */
public final class SchemaCompiler {
    /** PostgreSQL's identifier limit; longer names would be silently truncated in the projection. */
    public static final int MAX_NAME_BYTES = 63;
    private static final Pattern SCOPE_PATTERN = Pattern.compile("([^:{}]+):\\{([^:{}]+)\\}");
    /** SPEC §2.4: the types whose rendering as a row id is the same in every implementation. */
    private static final Set<TypeTag> ROW_ID_TYPES = Set.of(TypeTag.STRING, TypeTag.INTEGER, TypeTag.BOOLEAN,
            TypeTag.JSON);

    private SchemaCompiler() { }

    /**
     * Loads a schema from a file path, or else from a class-path resource of that name.
     *
     * @throws SchemaException if neither exists or the content is invalid
     */
    public static CompiledSchema load(String location, ClassLoader loader) {
        Path path = Path.of(location);
        String text;
        try {
            if (Files.isRegularFile(path)) {
                text = Files.readString(path, StandardCharsets.UTF_8);
            } else {
                String resource = location.startsWith("/") ? location.substring(1) : location;
                try (InputStream in = loader.getResourceAsStream(resource)) {
                    if (in == null) {
                        throw new SchemaException("syncular.schema: no schema file or class-path resource named \""
                                + location + "\"");
                    }
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
        } catch (IOException e) {
            throw new SchemaException("syncular.schema: cannot read \"" + location + "\": " + e.getMessage(), e);
        }
        return compile(text);
    }

    /** Compiles schema text in either form. */
    public static CompiledSchema compile(String text) {
        Object root;
        try {
            root = Json.parse(text);
        } catch (Json.JsonException e) {
            throw new SchemaException("schema: not valid JSON (" + e.getMessage() + ")");
        }
        Map<String, Object> doc = object(root, "schema", "the document");
        boolean ir = doc.containsKey("irVersion");
        if (ir) {
            Object irVersion = doc.get("irVersion");
            if (!(irVersion instanceof BigDecimal d) || d.compareTo(BigDecimal.ONE) != 0) {
                throw new SchemaException("schema: irVersion must be 1");
            }
        }
        int version = version(doc.get(ir ? "schemaVersion" : "version"), ir ? "schemaVersion" : "version");
        List<Object> rawTables = list(doc.get("tables"), "schema", "tables");
        if (rawTables.isEmpty()) throw new SchemaException("schema: tables must not be empty");

        List<TableSchema> tables = new ArrayList<>();
        Set<String> tableNames = new HashSet<>();
        for (Object rawTable : rawTables) {
            TableSchema t = table(object(rawTable, "schema", "a table"));
            if (!tableNames.add(t.name())) throw new SchemaException("schema: duplicate table \"" + t.name() + "\"");
            tables.add(t);
        }
        checkReferenceTargets(tables);
        return new CompiledSchema(version, tables);
    }

    private static TableSchema table(Map<String, Object> raw) {
        String name = string(raw.get("name"), "schema", "table name");
        checkName(name, "table \"" + name + "\"");
        String where = "table \"" + name + "\"";

        List<ColumnSchema> columns = new ArrayList<>();
        Set<String> columnNames = new HashSet<>();
        for (Object rawColumn : list(raw.get("columns"), where, "columns")) {
            ColumnSchema c = column(name, object(rawColumn, where, "a column"));
            if (!columnNames.add(c.name())) {
                throw new SchemaException(where + " column \"" + c.name() + "\": duplicate column");
            }
            columns.add(c);
        }
        if (columns.isEmpty()) throw new SchemaException(where + ": has no columns");

        String primaryKey = string(raw.get("primaryKey"), where, "primaryKey");
        ColumnSchema pk = columns.stream().filter(c -> c.name().equals(primaryKey)).findFirst()
                .orElseThrow(() -> new SchemaException(where + " column \"" + primaryKey
                        + "\": primary key is not a column of the table"));
        if (pk.nullable()) throw new SchemaException(where + " column \"" + pk.name() + "\": primary key is nullable");

        Object rawScopes = raw.get("scopes");
        List<Object> scopeList = rawScopes == null ? List.of() : list(rawScopes, where, "scopes");
        if (scopeList.isEmpty()) throw new SchemaException(where + ": has no scope pattern");
        List<ScopePattern> scopes = new ArrayList<>();
        Map<String, String> columnOfVariable = new HashMap<>();
        for (Object rawScope : scopeList) {
            ScopePattern s = scope(where, rawScope);
            ColumnSchema c = columns.stream().filter(col -> col.name().equals(s.column())).findFirst()
                    .orElseThrow(() -> new SchemaException(where + " column \"" + s.column()
                            + "\": scope pattern \"" + s.pattern() + "\" names a column the table does not have"));
            String previous = columnOfVariable.putIfAbsent(s.variable(), s.column());
            if (previous != null && !previous.equals(s.column())) {
                throw new SchemaException(where + " column \"" + s.column() + "\": scope variable \"" + s.variable()
                        + "\" is already mapped to column \"" + previous + "\"");
            }
            if (c.encrypted()) {
                throw new SchemaException(where + " column \"" + c.name() + "\": an encrypted column cannot be a scope column");
            }
            if (previous == null) scopes.add(s);
        }
        if (pk.encrypted()) {
            throw new SchemaException(where + " column \"" + pk.name() + "\": an encrypted column cannot be the primary key");
        }
        List<ColumnReference> references = references(where, raw.get("references"), columns);
        return new TableSchema(name, primaryKey, columns, scopes, references);
    }

    /** SPEC §6.11: the rules one table can check alone. A reference may name its own table. */
    private static List<ColumnReference> references(String where, Object raw, List<ColumnSchema> columns) {
        List<ColumnReference> references = new ArrayList<>();
        if (raw == null) return references;
        for (Object rawReference : list(raw, where, "references")) {
            Map<String, Object> m = object(rawReference, where, "a reference");
            String columnName = string(m.get("column"), where, "reference column");
            String at = where + " column \"" + columnName + "\"";
            ColumnSchema c = columns.stream().filter(col -> col.name().equals(columnName)).findFirst()
                    .orElseThrow(() -> new SchemaException(at + ": reference names a column the table does not have"));
            String parentTable = string(m.get("parentTable"), at, "reference parentTable");
            String onDeleteName = optionalString(m.get("onDelete"), at, "reference onDelete");
            OnDelete onDelete = onDeleteName == null ? OnDelete.RESTRICT
                    : OnDelete.forSchemaName(onDeleteName).orElseThrow(() -> new SchemaException(at
                            + ": reference onDelete \"" + onDeleteName + "\" is not RESTRICT, CASCADE or SET NULL"));
            // §6.11 allows one REFERENCES clause per column; typegen refuses a second one.
            if (references.stream().anyMatch(r -> r.column().equals(columnName))) {
                throw new SchemaException(at + ": column declares more than one reference");
            }
            // The server reads the column to find the parent row, and cannot read ciphertext (§5.11).
            if (c.encrypted()) throw new SchemaException(at + ": an encrypted column cannot be a reference column");
            if (onDelete == OnDelete.SET_NULL && !c.nullable()) {
                throw new SchemaException(at + ": ON DELETE SET NULL needs a nullable column");
            }
            references.add(new ColumnReference(columnName, parentTable, onDelete));
        }
        return references;
    }

    /** SPEC §6.11: the rules that need the parent table, checked once every table is compiled. */
    private static void checkReferenceTargets(List<TableSchema> tables) {
        Map<String, TableSchema> byName = new HashMap<>();
        for (TableSchema t : tables) byName.put(t.name(), t);
        for (TableSchema child : tables) {
            for (ColumnReference r : child.references()) {
                String at = "table \"" + child.name() + "\" column \"" + r.column() + "\"";
                TableSchema parent = byName.get(r.parentTable());
                if (parent == null) {
                    throw new SchemaException(at + ": reference names table \"" + r.parentTable()
                            + "\", which the schema does not have");
                }
                ColumnSchema key = parent.column(parent.primaryKey()).orElseThrow();
                // The child value is looked up as the parent's row id, so it must have a row-id type (§2.4).
                if (!ROW_ID_TYPES.contains(key.type())) {
                    throw new SchemaException(at + ": reference names table \"" + parent.name()
                            + "\", whose primary key \"" + key.name() + "\" has type " + key.type().schemaName()
                            + ", which cannot be referenced");
                }
                ColumnSchema c = child.column(r.column()).orElseThrow();
                if (c.type() != key.type()) {
                    throw new SchemaException(at + ": reference column has type " + c.type().schemaName()
                            + ", but the primary key \"" + key.name() + "\" of table \"" + parent.name()
                            + "\" has type " + key.type().schemaName());
                }
                // Same pattern strings, in any order (typegen and the reference server compare them so): a cascade
                // then never leaves the authorization boundary. Scope columns may differ.
                Set<String> childPatterns = patterns(child);
                Set<String> parentPatterns = patterns(parent);
                if (!childPatterns.equals(parentPatterns)) {
                    throw new SchemaException(at + ": reference to table \"" + parent.name()
                            + "\" crosses an authorization boundary: its scope patterns " + parentPatterns
                            + " differ from " + childPatterns);
                }
            }
        }
    }

    private static Set<String> patterns(TableSchema t) {
        Set<String> patterns = new TreeSet<>();
        for (ScopePattern s : t.scopes()) patterns.add(s.pattern());
        return patterns;
    }

    private static ColumnSchema column(String table, Map<String, Object> raw) {
        String name = string(raw.get("name"), "table \"" + table + "\"", "column name");
        String where = "table \"" + table + "\" column \"" + name + "\"";
        checkName(name, where);
        String typeName = string(raw.get("type"), where, "type");
        TypeTag type = TypeTag.forSchemaName(typeName)
                .orElseThrow(() -> new SchemaException(where + ": unknown type \"" + typeName + "\""));
        boolean nullable = bool(raw.get("nullable"), where, "nullable", false);
        String crdtType = optionalString(raw.get("crdtType"), where, "crdtType");
        boolean encrypted = bool(raw.get("encrypted"), where, "encrypted", false);
        String declaredType = optionalString(raw.get("declaredType"), where, "declaredType");
        if (type == TypeTag.CRDT && (crdtType == null || crdtType.isEmpty())) {
            throw new SchemaException(where + ": a crdt column needs a crdtType");
        }
        if (encrypted && type != TypeTag.BYTES) {
            throw new SchemaException(where + ": an encrypted column must have type bytes");
        }
        return new ColumnSchema(name, type, nullable, crdtType, encrypted, declaredType);
    }

    private static ScopePattern scope(String where, Object raw) {
        String pattern;
        String column;
        String declaredVariable = null;
        if (raw instanceof String s) {
            pattern = s;
            column = null;
        } else {
            Map<String, Object> m = object(raw, where, "a scope");
            pattern = string(m.get("pattern"), where, "scope pattern");
            column = optionalString(m.get("column"), where, "scope column");
            declaredVariable = optionalString(m.get("variable"), where, "scope variable");
        }
        Matcher matcher = SCOPE_PATTERN.matcher(pattern);
        if (!matcher.matches()) {
            throw new SchemaException(where + ": scope pattern \"" + pattern + "\" is not of the form prefix:{variable}");
        }
        String variable = matcher.group(2);
        if (declaredVariable != null && !declaredVariable.equals(variable)) {
            throw new SchemaException(where + ": scope pattern \"" + pattern + "\" declares variable \""
                    + declaredVariable + "\", but its pattern names \"" + variable + "\"");
        }
        return new ScopePattern(pattern, matcher.group(1), variable, column == null ? variable : column);
    }

    private static void checkName(String name, String where) {
        if (name.isEmpty()) throw new SchemaException(where + ": empty name");
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("sync_") || lower.startsWith("_sync_")) {
            throw new SchemaException(where + ": the prefixes sync_ and _sync_ are reserved");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw new SchemaException(where + ": name is longer than " + MAX_NAME_BYTES + " bytes");
        }
        if (name.indexOf('\0') >= 0) throw new SchemaException(where + ": name contains NUL");
    }

    private static int version(Object raw, String key) {
        if (raw instanceof BigDecimal d) {
            try {
                int v = d.intValueExact();
                if (v >= 1) return v;
            } catch (ArithmeticException ignored) {
                // falls through to the error below
            }
        }
        throw new SchemaException("schema: " + key + " must be an integer >= 1");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object raw, String where, String what) {
        if (raw instanceof Map<?, ?> m) return (Map<String, Object>) m;
        throw new SchemaException(where + ": " + what + " must be a JSON object");
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object raw, String where, String what) {
        if (raw instanceof List<?> l) return (List<Object>) l;
        throw new SchemaException(where + ": " + what + " must be a JSON array");
    }

    private static String string(Object raw, String where, String what) {
        if (raw instanceof String s) return s;
        throw new SchemaException(where + ": " + what + " must be a string");
    }

    private static String optionalString(Object raw, String where, String what) {
        return raw == null ? null : string(raw, where, what);
    }

    private static boolean bool(Object raw, String where, String what, boolean dflt) {
        if (raw == null) return dflt;
        if (raw instanceof Boolean b) return b;
        throw new SchemaException(where + ": " + what + " must be true or false");
    }
}

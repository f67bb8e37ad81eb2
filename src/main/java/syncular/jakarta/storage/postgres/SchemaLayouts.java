package syncular.jakarta.storage.postgres;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.TypeTag;

/**
 * The codec-relevant layout of every table as of the last applied schema version, persisted in
 * {@code sync_schema_meta.layouts} in upstream's JSON shape ({@code {"table":[{"name","type","nullable"}]}},
 * relational-rows.ts {@code layoutsOf}), plus each table's primary-key column in {@code primary_keys}. The row codec
 * is strict: a payload only decodes under the column list it was written with, so the stored layout is what a
 * migration decodes old payloads with, and what a same-version start compares against. Pure logic, no SQL.
 */
final class SchemaLayouts {
    private SchemaLayouts() { }

    /** One persisted column: exactly the inputs of the codec's byte layout. */
    record ColumnLayout(String name, TypeTag type, boolean nullable) {
        ColumnDescriptor descriptor() { return new ColumnDescriptor(name, type, nullable); }
    }

    /** What a migration does per table. */
    record Plan(List<TableSchema> created, Map<TableSchema, List<ColumnLayout>> grown, List<String> retired) { }

    static String layoutsJson(CompiledSchema schema) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (TableSchema t : schema.tables()) {
            List<Object> cols = new ArrayList<>();
            for (ColumnSchema c : t.columns()) {
                Map<String, Object> col = new LinkedHashMap<>();
                col.put("name", c.name());
                col.put("type", c.type().schemaName());
                col.put("nullable", c.nullable());
                cols.add(col);
            }
            out.put(t.name(), cols);
        }
        return Json.write(out);
    }

    static String primaryKeysJson(CompiledSchema schema) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (TableSchema t : schema.tables()) out.put(t.name(), t.primaryKey());
        return Json.write(out);
    }

    /** Parses the stored layouts; a marker written by no layout-aware build ({@code '{}'}, empty) is empty. */
    static Map<String, List<ColumnLayout>> parseLayouts(String json) {
        Map<String, List<ColumnLayout>> out = new TreeMap<>();
        if (json == null || json.isBlank()) return out;
        try {
            Map<?, ?> root = (Map<?, ?>) Json.parse(json);
            for (Map.Entry<?, ?> e : root.entrySet()) {
                List<ColumnLayout> cols = new ArrayList<>();
                for (Object o : (List<?>) e.getValue()) {
                    Map<?, ?> m = (Map<?, ?>) o;
                    TypeTag type = TypeTag.forSchemaName((String) m.get("type"))
                            .orElseThrow(() -> new IllegalArgumentException("unknown type"));
                    cols.add(new ColumnLayout((String) m.get("name"), type, (Boolean) m.get("nullable")));
                }
                out.put((String) e.getKey(), cols);
            }
        } catch (RuntimeException e) {
            // an unreadable marker cannot be reasoned about: refuse rather than guess at payload layouts
            throw new StorageException(StorageErrorCode.STORED_LAYOUT_MISMATCH, Map.of("reason", "unreadable layouts"),
                    -1, e);
        }
        return out;
    }

    static Map<String, String> parsePrimaryKeys(String json) {
        Map<String, String> out = new TreeMap<>();
        if (json == null || json.isBlank()) return out;
        try {
            ((Map<?, ?>) Json.parse(json)).forEach((k, v) -> out.put((String) k, (String) v));
        } catch (RuntimeException e) {
            throw new StorageException(StorageErrorCode.STORED_LAYOUT_MISMATCH,
                    Map.of("reason", "unreadable primary keys"), -1, e);
        }
        return out;
    }

    static List<ColumnLayout> layoutOf(TableSchema t) {
        return t.columns().stream().map(c -> new ColumnLayout(c.name(), c.type(), c.nullable())).toList();
    }

    /**
     * Same version, different build: version equality is not layout equality (seeds/003). Every configured table
     * must have exactly the stored columns and key, and every stored table must still be configured.
     */
    static void assertSameLayouts(CompiledSchema schema, Map<String, List<ColumnLayout>> stored,
                                  Map<String, String> storedKeys) {
        for (TableSchema t : schema.tables()) {
            List<ColumnLayout> expected = layoutOf(t);
            List<ColumnLayout> actual = stored.get(t.name());
            if (actual == null) throw storedMismatch(t.name(), null, "table not in the stored layouts");
            int n = Math.max(expected.size(), actual.size());
            for (int i = 0; i < n; i++) {
                ColumnLayout e = i < expected.size() ? expected.get(i) : null;
                ColumnLayout a = i < actual.size() ? actual.get(i) : null;
                if (e == null || !e.equals(a)) {
                    throw storedMismatch(t.name(), e != null ? e.name() : a.name(), "column differs");
                }
            }
            String key = storedKeys.get(t.name());
            if (key != null && !key.equals(t.primaryKey())) {
                throw storedMismatch(t.name(), t.primaryKey(), "primary key differs");
            }
        }
        for (String name : stored.keySet()) {
            if (schema.table(name).isEmpty()) throw storedMismatch(name, null, "stored table not configured");
        }
    }

    /**
     * The append-only migration subset (relational-rows.ts {@code assertAppendOnlyMigration}): the stored layout
     * must be an exact prefix of the new one, appended columns nullable, the key unchanged. Anything else is refused
     * before any statement runs, so a refused bump leaves the database untouched.
     */
    static Plan plan(CompiledSchema schema, Map<String, List<ColumnLayout>> stored, Map<String, String> storedKeys) {
        List<TableSchema> created = new ArrayList<>();
        Map<TableSchema, List<ColumnLayout>> grown = new LinkedHashMap<>();
        for (TableSchema t : schema.tables()) {
            List<ColumnLayout> old = stored.get(t.name());
            if (old == null) {
                created.add(t);
                continue;
            }
            String key = storedKeys.get(t.name());
            if (key != null && !key.equals(t.primaryKey())) throw refused(t.name(), t.primaryKey(), "primary key changed");
            List<ColumnLayout> now = layoutOf(t);
            if (old.size() > now.size()) throw refused(t.name(), old.get(now.size()).name(), "column removed");
            for (int i = 0; i < old.size(); i++) {
                ColumnLayout before = old.get(i);
                ColumnLayout after = now.get(i);
                if (!before.name().equals(after.name())) throw refused(t.name(), after.name(), "column renamed or reordered");
                if (before.type() != after.type()) throw refused(t.name(), after.name(), "column type changed");
                if (before.nullable() != after.nullable()) throw refused(t.name(), after.name(), "column nullability changed");
            }
            for (int i = old.size(); i < now.size(); i++) {
                if (!now.get(i).nullable()) {
                    throw refused(t.name(), now.get(i).name(), "appended column must be nullable");
                }
            }
            if (old.size() < now.size()) grown.put(t, old);
        }
        List<String> retired = stored.keySet().stream().filter(n -> schema.table(n).isEmpty()).sorted().toList();
        return new Plan(created, grown, retired);
    }

    static StorageException storedMismatch(String table, String column, String reason) {
        return new StorageException(StorageErrorCode.STORED_LAYOUT_MISMATCH, details(table, column, reason));
    }

    static StorageException refused(String table, String column, String reason) {
        return new StorageException(StorageErrorCode.MIGRATION_REFUSED, details(table, column, reason));
    }

    static Map<String, String> details(String table, String column, String reason) {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("table", table);
        if (column != null) d.put("column", column);
        d.put("reason", reason);
        return d;
    }
}

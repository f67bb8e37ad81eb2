package syncular.jakarta.storage;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.RowCodec;

/** Schemas and rows for storage tests, in the compact conformance form (SPEC §2.4). */
public final class TestSchemas {
    private TestSchemas() { }

    /** {@code tasks(id string, project_id string, title string, done boolean)}, scope {@code project:{project_id}}. */
    public static CompiledSchema tasks(int version) {
        return SchemaCompiler.compile("""
                {"version": %d, "tables": [{"name": "tasks", "primaryKey": "id",
                  "columns": [{"name": "id", "type": "string", "nullable": false},
                              {"name": "project_id", "type": "string", "nullable": false},
                              {"name": "title", "type": "string", "nullable": false},
                              {"name": "done", "type": "boolean", "nullable": false}],
                  "scopes": [{"pattern": "project:{project_id}"}]}]}""".formatted(version));
    }

    /**
     * A {@code tasks} table with the given columns JSON (scope {@code project:{project_id}}, key {@code key}), plus
     * optional extra tables JSON appended to the table list.
     */
    public static CompiledSchema tasksWith(int version, String key, String columnsJson, String extraTables) {
        return SchemaCompiler.compile("{\"version\": " + version + ", \"tables\": [{\"name\": \"tasks\", "
                + "\"primaryKey\": \"" + key + "\", \"columns\": [" + columnsJson + "], "
                + "\"scopes\": [{\"pattern\": \"project:{project_id}\"}]}"
                + (extraTables.isEmpty() ? "" : ", " + extraTables) + "]}");
    }

    /**
     * {@link #tasks} plus declared references (SPEC §6.11) from {@code cards} to parents keyed by each row-id type:
     * {@code board_id → boards(id string)} CASCADE, {@code slot → slots(n integer)} SET NULL,
     * {@code tag → tags(key json)} and {@code flag → flags(on boolean)} RESTRICT; every table in scope
     * {@code project:{project_id}}, as a reference needs the same scope patterns on both sides.
     */
    public static CompiledSchema withReferences(int version) {
        return tasksWith(version, "id", TASK_COLUMNS, REFERENCE_TABLES);
    }

    private static final String TASK_COLUMNS = """
            {"name": "id", "type": "string", "nullable": false},
            {"name": "project_id", "type": "string", "nullable": false},
            {"name": "title", "type": "string", "nullable": false},
            {"name": "done", "type": "boolean", "nullable": false}""";

    private static final String REFERENCE_TABLES = """
            {"name": "boards", "primaryKey": "id", "scopes": [{"pattern": "project:{project_id}"}],
             "columns": [{"name": "id", "type": "string", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false}]},
            {"name": "slots", "primaryKey": "n", "scopes": [{"pattern": "project:{project_id}"}],
             "columns": [{"name": "n", "type": "integer", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false}]},
            {"name": "tags", "primaryKey": "key", "scopes": [{"pattern": "project:{project_id}"}],
             "columns": [{"name": "key", "type": "json", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false}]},
            {"name": "flags", "primaryKey": "on", "scopes": [{"pattern": "project:{project_id}"}],
             "columns": [{"name": "on", "type": "boolean", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false}]},
            {"name": "cards", "primaryKey": "id", "scopes": [{"pattern": "project:{project_id}"}],
             "columns": [{"name": "id", "type": "string", "nullable": false},
                         {"name": "project_id", "type": "string", "nullable": false},
                         {"name": "board_id", "type": "string", "nullable": true},
                         {"name": "slot", "type": "integer", "nullable": true},
                         {"name": "tag", "type": "json", "nullable": true},
                         {"name": "flag", "type": "boolean", "nullable": true}],
             "references": [{"column": "board_id", "parentTable": "boards", "onDelete": "CASCADE"},
                            {"column": "slot", "parentTable": "slots", "onDelete": "SET NULL"},
                            {"column": "tag", "parentTable": "tags"},
                            {"column": "flag", "parentTable": "flags", "onDelete": "RESTRICT"}]}""";

    /** A version-1 {@code cards} row of {@link #withReferences}; null references are NULL. */
    public static StoredRow cardRow(CompiledSchema schema, String id, String project, String boardId, Long slot,
                                    String tagJson, Boolean flag) {
        TableSchema t = schema.table("cards").orElseThrow();
        return new StoredRow(id, 1, scopes("project_id", project),
                RowCodec.encode(t.descriptors(), new Object[] {id, project, boardId, slot, tagJson, flag}));
    }

    /** Every column type once, with two scope variables. */
    public static CompiledSchema allTypes(int version) {
        return SchemaCompiler.compile("""
                {"version": %d, "tables": [{"name": "notes", "primaryKey": "id",
                  "columns": [{"name": "id", "type": "string", "nullable": false},
                              {"name": "org_id", "type": "string", "nullable": false},
                              {"name": "owner_id", "type": "string", "nullable": false},
                              {"name": "title", "type": "string", "nullable": true},
                              {"name": "count", "type": "integer", "nullable": true},
                              {"name": "score", "type": "float", "nullable": false},
                              {"name": "done", "type": "boolean", "nullable": false},
                              {"name": "meta", "type": "json", "nullable": true},
                              {"name": "blob", "type": "bytes", "nullable": true},
                              {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs"}],
                  "scopes": [{"pattern": "org:{org_id}"}, {"pattern": "owner:{owner_id}"}]}]}"""
                .formatted(version));
    }

    public static byte[] taskPayload(CompiledSchema schema, String id, String project, String title, boolean done) {
        TableSchema t = schema.table("tasks").orElseThrow();
        return RowCodec.encode(t.descriptors(), new Object[] {id, project, title, done});
    }

    public static Map<String, String> scopes(String var, String value) {
        return new TreeMap<>(Map.of(var, value));
    }

    public static StoredRow taskRow(CompiledSchema schema, String id, String project, long version) {
        return new StoredRow(id, version, scopes("project_id", project),
                taskPayload(schema, id, project, "title " + id, false));
    }

    /** A one-change commit that upserts {@code row} into {@code tasks}. */
    public static NewCommit upsertCommit(String clientCommitId, StoredRow row) {
        return new NewCommit("client-1", clientCommitId, "actor-1", 1_000L,
                List.of(StoredChange.upsert("tasks", row.rowId(), row.serverVersion(), row.scopes(), row.payload())));
    }
}

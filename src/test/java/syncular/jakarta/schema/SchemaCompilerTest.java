package syncular.jakarta.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.TypeTag;

class SchemaCompilerTest {
    @Test
    void compilesTheShippedDemoSchemaFromTheClassPath() {
        CompiledSchema s = SchemaCompiler.load("syncular/demo/syncular.ir.json", getClass().getClassLoader());
        assertEquals(1, s.version());
        TableSchema todos = s.table("todos").orElseThrow();
        assertEquals("id", todos.primaryKey());
        assertEquals(List.of(
                new ColumnDescriptor("id", TypeTag.STRING, false),
                new ColumnDescriptor("list_id", TypeTag.STRING, false),
                new ColumnDescriptor("title", TypeTag.STRING, false),
                new ColumnDescriptor("done", TypeTag.BOOLEAN, false),
                new ColumnDescriptor("position", TypeTag.INTEGER, false),
                new ColumnDescriptor("updated_at_ms", TypeTag.INTEGER, false)), todos.descriptors());
        assertEquals(List.of(new ScopePattern("list:{list_id}", "list", "list_id", "list_id")), todos.scopes());
        assertEquals("list:groceries", todos.scopes().get(0).scopeKey("groceries"));
    }

    @Test
    void compilesTheCompactConformanceFormWithDefaultScopeColumns() {
        CompiledSchema s = SchemaCompiler.compile("""
                {"version":3,"tables":[
                 {"name":"tasks","primaryKey":"id","columns":[
                   {"name":"id","type":"string","nullable":false},
                   {"name":"project_id","type":"string","nullable":false},
                   {"name":"meta","type":"json","nullable":true},
                   {"name":"doc","type":"crdt","nullable":true,"crdtType":"yjs-doc"},
                   {"name":"secret","type":"bytes","nullable":true,"encrypted":true,"declaredType":"BLOB"}],
                  "scopes":[{"pattern":"project:{project_id}"}]},
                 {"name":"docs","primaryKey":"id","columns":[
                   {"name":"id","type":"string","nullable":false},
                   {"name":"org_id","type":"string","nullable":false},
                   {"name":"project_id","type":"string","nullable":false}],
                  "scopes":[{"pattern":"org:{org_id}"},{"pattern":"project:{projectId}","column":"project_id"}]}]}
                """);
        assertEquals(3, s.version());
        assertEquals("project_id", s.table("docs").orElseThrow().scopeForVariable("projectId").orElseThrow().column());
        assertEquals(List.of("project_id", "org_id", "projectId"), List.copyOf(s.variables()));
        ColumnSchema secret = s.table("tasks").orElseThrow().column("secret").orElseThrow();
        assertTrue(secret.encrypted());
        assertEquals(TypeTag.BYTES, secret.descriptor().type());
        assertFalse(s.table("nope").isPresent());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "unknown type|{\"name\":\"p\",\"type\":\"decimal\",\"nullable\":true}|p:{id}|table \"t\" column \"p\": unknown type \"decimal\"",
        "duplicate column|{\"name\":\"id\",\"type\":\"string\"}|p:{id}|table \"t\" column \"id\": duplicate column",
        "crdt without crdtType|{\"name\":\"d\",\"type\":\"crdt\",\"nullable\":true}|p:{id}|table \"t\" column \"d\": a crdt column needs a crdtType",
        "encrypted non-bytes|{\"name\":\"e\",\"type\":\"string\",\"encrypted\":true}|p:{id}|table \"t\" column \"e\": an encrypted column must have type bytes",
        "encrypted scope column|{\"name\":\"e\",\"type\":\"bytes\",\"encrypted\":true}|p:{e}|table \"t\" column \"e\": an encrypted column cannot be a scope column",
        "reserved column prefix|{\"name\":\"_sync_x\",\"type\":\"string\"}|p:{id}|table \"t\" column \"_sync_x\": the prefixes sync_ and _sync_ are reserved",
        "bad pattern|{\"name\":\"x\",\"type\":\"string\"}|project-{id}|table \"t\": scope pattern \"project-{id}\" is not of the form prefix:{variable}",
        "pattern column missing|{\"name\":\"x\",\"type\":\"string\"}|p:{owner}|table \"t\" column \"owner\": scope pattern \"p:{owner}\" names a column the table does not have",
    })
    void refusesAnInvalidColumnOrPatternNamingTableAndColumn(String name, String extraColumn, String pattern,
                                                             String message) {
        String schema = "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":["
                + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}," + extraColumn + "],"
                + "\"scopes\":[{\"pattern\":\"" + pattern + "\"}]}]}";
        SchemaException e = assertThrows(SchemaException.class, () -> SchemaCompiler.compile(schema));
        assertEquals(message, e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "duplicate table|{\"version\":1,\"tables\":[T,T]}|schema: duplicate table \"t\"",
        "version zero|{\"version\":0,\"tables\":[T]}|schema: version must be an integer >= 1",
        "fractional version|{\"version\":1.5,\"tables\":[T]}|schema: version must be an integer >= 1",
        "ir version string|{\"irVersion\":1,\"schemaVersion\":\"2\",\"tables\":[T]}|schema: schemaVersion must be an integer >= 1",
        "not json|{\"version\":1,|schema: not valid JSON (expected an object key at character 13)",
    })
    void refusesAnInvalidDocument(String name, String template, String message) {
        String table = "{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":[{\"name\":\"id\",\"type\":\"string\"}],"
                + "\"scopes\":[{\"pattern\":\"p:{id}\"}]}";
        SchemaException e = assertThrows(SchemaException.class,
                () -> SchemaCompiler.compile(template.replace("T", table)));
        assertEquals(message, e.getMessage());
    }

    @Test
    void refusesATableWithoutScopes() {
        assertMessage("{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":["
                + "{\"name\":\"id\",\"type\":\"string\"}],\"scopes\":[]}]}", "table \"t\": has no scope pattern");
    }

    @Test
    void refusesAPrimaryKeyThatIsNotAColumn() {
        assertMessage("{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"key\",\"columns\":["
                        + "{\"name\":\"id\",\"type\":\"string\"}],\"scopes\":[\"p:{id}\"]}]}",
                "table \"t\" column \"key\": primary key is not a column of the table");
    }

    @Test
    void refusesOneVariableMappedToTwoColumns() {
        assertMessage("{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":["
                        + "{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"a\",\"type\":\"string\"}],"
                        + "\"scopes\":[{\"pattern\":\"p:{v}\",\"column\":\"id\"},{\"pattern\":\"q:{v}\",\"column\":\"a\"}]}]}",
                "table \"t\" column \"a\": scope variable \"v\" is already mapped to column \"id\"");
    }

    @Test
    void refusesReservedAndOverlongTableNames() {
        assertMessage("{\"version\":1,\"tables\":[{\"name\":\"sync_rows\",\"primaryKey\":\"id\",\"columns\":["
                        + "{\"name\":\"id\",\"type\":\"string\"}],\"scopes\":[\"p:{id}\"]}]}",
                "table \"sync_rows\": the prefixes sync_ and _sync_ are reserved");
        String longName = "t".repeat(64);
        assertMessage("{\"version\":1,\"tables\":[{\"name\":\"" + longName + "\",\"primaryKey\":\"id\",\"columns\":["
                        + "{\"name\":\"id\",\"type\":\"string\"}],\"scopes\":[\"p:{id}\"]}]}",
                "table \"" + longName + "\": name is longer than 63 bytes");
    }

    @Test
    void refusesAMissingFileNamingTheKey() {
        SchemaException e = assertThrows(SchemaException.class,
                () -> SchemaCompiler.load("/no/such/schema.json", getClass().getClassLoader()));
        assertEquals("syncular.schema: no schema file or class-path resource named \"/no/such/schema.json\"",
                e.getMessage());
    }

    private static void assertMessage(String schema, String message) {
        assertEquals(message, assertThrows(SchemaException.class, () -> SchemaCompiler.compile(schema)).getMessage());
    }
}

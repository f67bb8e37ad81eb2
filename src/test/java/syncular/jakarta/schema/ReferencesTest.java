package syncular.jakarta.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import syncular.jakarta.schema.ColumnReference.OnDelete;

/** Declared references (SPEC §6.11) in both schema forms: what compiles, what {@code referencedBy} answers, and what
 * is refused. */
class ReferencesTest {
    /** Compact form: a folder parent and a note child with one reference per behaviour, plus a self-reference. */
    private static final String COMPACT = """
            {"version":1,"tables":[
             {"name":"folders","primaryKey":"folder_id","columns":[
               {"name":"folder_id","type":"string","nullable":false},
               {"name":"name","type":"string","nullable":false},
               {"name":"parent_folder","type":"string","nullable":true}],
              "scopes":[{"pattern":"folder:{folder_id}"}],
              "references":[{"column":"parent_folder","parentTable":"folders","onDelete":"CASCADE"}]},
             {"name":"notes","primaryKey":"id","columns":[
               {"name":"id","type":"string","nullable":false},
               {"name":"folder_id","type":"string","nullable":false},
               {"name":"pinned_in","type":"string","nullable":true},
               {"name":"moved_from","type":"string","nullable":true},
               {"name":"kept_by","type":"string","nullable":true}],
              "scopes":[{"pattern":"folder:{folder_id}"}],
              "references":[
               {"column":"kept_by","parentTable":"folders"},
               {"column":"pinned_in","parentTable":"folders","onDelete":"CASCADE"},
               {"column":"moved_from","parentTable":"folders","onDelete":"SET NULL"}]}]}
            """;

    @Test
    void compilesTheCompactFormAndListsIncomingReferencesInSchemaThenDeclarationOrder() {
        CompiledSchema s = SchemaCompiler.compile(COMPACT);
        TableSchema notes = s.table("notes").orElseThrow();
        assertEquals(List.of(
                new ColumnReference("kept_by", "folders", OnDelete.RESTRICT),
                new ColumnReference("pinned_in", "folders", OnDelete.CASCADE),
                new ColumnReference("moved_from", "folders", OnDelete.SET_NULL)), notes.references());
        assertEquals(new ColumnReference("moved_from", "folders", OnDelete.SET_NULL),
                notes.reference("moved_from").orElseThrow());
        assertTrue(notes.reference("folder_id").isEmpty());
        // folders comes first in the schema, so its self-reference is listed before the notes references.
        assertEquals(List.of(
                new IncomingReference("folders", "parent_folder", OnDelete.CASCADE),
                new IncomingReference("notes", "kept_by", OnDelete.RESTRICT),
                new IncomingReference("notes", "pinned_in", OnDelete.CASCADE),
                new IncomingReference("notes", "moved_from", OnDelete.SET_NULL)), s.referencedBy("folders"));
        assertEquals(List.of(), s.referencedBy("notes"));
        assertEquals(List.of(), s.referencedBy("no_such_table"));
    }

    @Test
    void compilesTheIrFormWhereEveryReferenceSpellsItsBehaviourAndTheIndexIsIgnored() {
        CompiledSchema s = SchemaCompiler.compile("""
                {"irVersion":1,"schemaVersion":2,"tables":[
                 {"name":"items","primaryKey":"id","columns":[
                   {"name":"id","type":"string","nullable":false},
                   {"name":"board_id","type":"string","nullable":false},
                   {"name":"owner","type":"string","nullable":true}],
                  "scopes":[{"pattern":"board:{board_id}","variable":"board_id","column":"board_id"}],
                  "references":[{"column":"owner","parentTable":"boards","onDelete":"SET NULL"},
                                {"column":"board_id","parentTable":"boards","onDelete":"RESTRICT"}],
                  "indexes":[{"name":"idx_items_owner_ref","columns":["owner"],"unique":false},
                             {"name":"idx_items_board_id_ref","columns":["board_id"],"unique":false}],
                  "extensions":{}},
                 {"name":"boards","primaryKey":"board_id","columns":[
                   {"name":"board_id","type":"string","nullable":false}],
                  "scopes":[{"pattern":"board:{board_id}","variable":"board_id","column":"board_id"}],
                  "extensions":{}}],
                 "subscriptions":[],"extensions":{}}
                """);
        // The child comes before its parent in table order: references are resolved once every table is known.
        assertEquals(List.of(
                new IncomingReference("items", "owner", OnDelete.SET_NULL),
                new IncomingReference("items", "board_id", OnDelete.RESTRICT)), s.referencedBy("boards"));
        assertEquals(List.of(), s.table("boards").orElseThrow().references());
    }

    @Test
    void aTableWithoutReferencesDeclaresNone() {
        CompiledSchema s = SchemaCompiler.load("syncular/demo/syncular.ir.json", getClass().getClassLoader());
        assertEquals(List.of(), s.table("todos").orElseThrow().references());
        assertEquals(List.of(), s.referencedBy("todos"));
        CompiledSchema empty = SchemaCompiler.compile(schema(
                table("t", "{\"name\":\"x\",\"type\":\"string\"}", "p:{id}", "[]")));
        assertEquals(List.of(), empty.table("t").orElseThrow().references());
    }

    @Test
    void aPrimaryKeyMayReferenceAnotherTablesPrimaryKey() {
        // One-to-one extension rows: §6.11 and typegen allow a reference on the child's own primary key.
        CompiledSchema s = SchemaCompiler.compile("""
                {"version":1,"tables":[
                 {"name":"projects","primaryKey":"project_id","columns":[{"name":"project_id","type":"string"}],
                  "scopes":["project:{project_id}"]},
                 {"name":"project_settings","primaryKey":"project_id","columns":[{"name":"project_id","type":"string"}],
                  "scopes":["project:{project_id}"],
                  "references":[{"column":"project_id","parentTable":"projects","onDelete":"CASCADE"}]}]}
                """);
        assertEquals(List.of(new IncomingReference("project_settings", "project_id", OnDelete.CASCADE)),
                s.referencedBy("projects"));
    }

    @Test
    void scopePatternsMatchInAnyOrderAndMayBindDifferentColumns() {
        // The rule compares pattern strings only: same variables, in any order; the child's columns are its own.
        CompiledSchema s = SchemaCompiler.compile("""
                {"version":1,"tables":[
                 {"name":"docs","primaryKey":"id","columns":[
                   {"name":"id","type":"integer"},{"name":"org_id","type":"string"},{"name":"team","type":"string"}],
                  "scopes":[{"pattern":"org:{org_id}"},{"pattern":"team:{team_id}","column":"team"}]},
                 {"name":"comments","primaryKey":"id","columns":[
                   {"name":"id","type":"string"},{"name":"doc_id","type":"integer","nullable":true},
                   {"name":"team_id","type":"string"},{"name":"org_id","type":"string"}],
                  "scopes":[{"pattern":"team:{team_id}"},{"pattern":"org:{org_id}"}],
                  "references":[{"column":"doc_id","parentTable":"docs","onDelete":"SET NULL"}]}]}
                """);
        assertEquals(List.of(new IncomingReference("comments", "doc_id", OnDelete.SET_NULL)), s.referencedBy("docs"));
    }

    @Test
    void onDeleteSchemaNamesAreTheIrSpellings() {
        assertEquals("RESTRICT", OnDelete.RESTRICT.schemaName());
        assertEquals("CASCADE", OnDelete.CASCADE.schemaName());
        assertEquals("SET NULL", OnDelete.SET_NULL.schemaName());
        assertEquals(OnDelete.SET_NULL, OnDelete.forSchemaName("SET NULL").orElseThrow());
        assertTrue(OnDelete.forSchemaName("SET_NULL").isEmpty());
        assertTrue(OnDelete.forSchemaName("cascade").isEmpty());
    }

    /**
     * Refusals of one child table {@code c(id, x, ...)} that references a parent {@code p(id string, ...)} with
     * scope pattern {@code s:{id}}. {@code childColumn} is the extra column {@code x}; {@code reference} the
     * reference list; {@code childPattern} the child's scope pattern.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "unknown child column|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"y\",\"parentTable\":\"p\"}]"
            + "|table \"c\" column \"y\": reference names a column the table does not have",
        "unknown parent table|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"q\"}]"
            + "|table \"c\" column \"x\": reference names table \"q\", which the schema does not have",
        "type unlike the parent key|{\"name\":\"x\",\"type\":\"integer\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\"}]"
            + "|table \"c\" column \"x\": reference column has type integer, but the primary key \"id\" of table \"p\" has type string",
        "different scope patterns|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|t:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\"}]"
            + "|table \"c\" column \"x\": reference to table \"p\" crosses an authorization boundary: its scope patterns [s:{id}] differ from [t:{id}]",
        "same prefix, other variable|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{x}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\"}]"
            + "|table \"c\" column \"x\": reference to table \"p\" crosses an authorization boundary: its scope patterns [s:{id}] differ from [s:{x}]",
        "set null on a non-nullable column|{\"name\":\"x\",\"type\":\"string\",\"nullable\":false}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":\"SET NULL\"}]"
            + "|table \"c\" column \"x\": ON DELETE SET NULL needs a nullable column",
        "set null on the primary key|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"id\",\"parentTable\":\"p\",\"onDelete\":\"SET NULL\"}]"
            + "|table \"c\" column \"id\": ON DELETE SET NULL needs a nullable column",
        "no action|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":\"NO ACTION\"}]"
            + "|table \"c\" column \"x\": reference onDelete \"NO ACTION\" is not RESTRICT, CASCADE or SET NULL",
        "set default|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":\"SET DEFAULT\"}]"
            + "|table \"c\" column \"x\": reference onDelete \"SET DEFAULT\" is not RESTRICT, CASCADE or SET NULL",
        "lower-case behaviour|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":\"cascade\"}]"
            + "|table \"c\" column \"x\": reference onDelete \"cascade\" is not RESTRICT, CASCADE or SET NULL",
        "two references on one column|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\"},{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":\"CASCADE\"}]"
            + "|table \"c\" column \"x\": column declares more than one reference",
        "encrypted reference column|{\"name\":\"x\",\"type\":\"bytes\",\"nullable\":true,\"encrypted\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\"}]"
            + "|table \"c\" column \"x\": an encrypted column cannot be a reference column",
        "onDelete not a string|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\",\"parentTable\":\"p\",\"onDelete\":1}]"
            + "|table \"c\" column \"x\": reference onDelete must be a string",
        "parentTable missing|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"column\":\"x\"}]"
            + "|table \"c\" column \"x\": reference parentTable must be a string",
        "column missing|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|[{\"parentTable\":\"p\"}]"
            + "|table \"c\": reference column must be a string",
        "references not an array|{\"name\":\"x\",\"type\":\"string\",\"nullable\":true}|s:{id}"
            + "|{\"column\":\"x\",\"parentTable\":\"p\"}"
            + "|table \"c\": references must be a JSON array",
    })
    void refusesAnInvalidReferenceNamingTableAndColumn(String name, String childColumn, String childPattern,
                                                       String references, String message) {
        String parent = table("p", "{\"name\":\"name\",\"type\":\"string\"}", "s:{id}", null);
        String child = table("c", childColumn, childPattern, references);
        assertMessage(schema(parent, child), message);
    }

    @Test
    void refusesAReferenceToAParentWhosePrimaryKeyCannotNameARow() {
        // SPEC §2.4: a float key renders differently per implementation, so no child can look its parent up by it.
        String parent = "{\"name\":\"p\",\"primaryKey\":\"id\",\"columns\":[{\"name\":\"id\",\"type\":\"float\"}],"
                + "\"scopes\":[\"s:{id}\"]}";
        String child = "{\"name\":\"c\",\"primaryKey\":\"id\",\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
                + "{\"name\":\"x\",\"type\":\"float\",\"nullable\":true}],\"scopes\":[\"s:{id}\"],"
                + "\"references\":[{\"column\":\"x\",\"parentTable\":\"p\"}]}";
        assertMessage(schema(parent, child), "table \"c\" column \"x\": reference names table \"p\", whose primary key"
                + " \"id\" has type float, which cannot be referenced");
    }

    @Test
    void refusesTheSameRulesInTheIrForm() {
        assertEquals(List.of(new IncomingReference("tasks", "project_id", OnDelete.RESTRICT)),
                SchemaCompiler.compile(ir("string", false, "project:{project_id}", "projects", null))
                        .referencedBy("projects"));
        assertMessage(ir("string", false, "project:{project_id}", "projects", "ON_DELETE"),
                "table \"tasks\" column \"project_id\": reference onDelete \"ON_DELETE\" is not RESTRICT, CASCADE"
                        + " or SET NULL");
        assertMessage(ir("string", false, "project:{project_id}", "projects", "SET NULL"),
                "table \"tasks\" column \"project_id\": ON DELETE SET NULL needs a nullable column");
        assertMessage(ir("string", true, "project:{project_id}", "nope", "CASCADE"),
                "table \"tasks\" column \"project_id\": reference names table \"nope\", which the schema does not have");
        assertMessage(ir("json", true, "project:{project_id}", "projects", "CASCADE"),
                "table \"tasks\" column \"project_id\": reference column has type json, but the primary key"
                        + " \"project_id\" of table \"projects\" has type string");
        assertMessage(ir("string", true, "task:{project_id}", "projects", "CASCADE"),
                "table \"tasks\" column \"project_id\": reference to table \"projects\" crosses an authorization"
                        + " boundary: its scope patterns [project:{project_id}] differ from [task:{project_id}]");
    }

    /** An IR document: {@code projects(project_id)} and {@code tasks(id, project_id)}, whose reference is varied. */
    private static String ir(String type, boolean nullable, String taskPattern, String parent, String onDelete) {
        return """
                {"irVersion":1,"schemaVersion":1,"tables":[
                 {"name":"projects","primaryKey":"project_id","columns":[
                   {"name":"project_id","type":"string","nullable":false}],
                  "scopes":[{"pattern":"project:{project_id}","variable":"project_id","column":"project_id"}],
                  "extensions":{}},
                 {"name":"tasks","primaryKey":"id","columns":[
                   {"name":"id","type":"string","nullable":false},
                   {"name":"project_id","type":"%s","nullable":%s}],
                  "scopes":[{"pattern":"%s","variable":"project_id","column":"project_id"}],
                  "references":[{"column":"project_id","parentTable":"%s"%s}],
                  "extensions":{}}]}
                """.formatted(type, nullable, taskPattern, parent,
                onDelete == null ? "" : ",\"onDelete\":\"" + onDelete + "\"");
    }

    private static String schema(String... tables) {
        return "{\"version\":1,\"tables\":[" + String.join(",", tables) + "]}";
    }

    /** A table {@code name(id string, extraColumn)} with one scope pattern and, unless null, a references member. */
    private static String table(String name, String extraColumn, String pattern, String references) {
        return "{\"name\":\"" + name + "\",\"primaryKey\":\"id\",\"columns\":["
                + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}," + extraColumn + "],"
                + "\"scopes\":[{\"pattern\":\"" + pattern + "\"}]"
                + (references == null ? "" : ",\"references\":" + references) + "}";
    }

    private static void assertMessage(String schema, String message) {
        assertEquals(message, assertThrows(SchemaException.class, () -> SchemaCompiler.compile(schema)).getMessage());
    }
}

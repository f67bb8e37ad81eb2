package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.ErrorCode;

class ScopesTest {
    static final CompiledSchema SCHEMA = SchemaCompiler.compile("""
            {"version":1,"tables":[{"name":"docs","primaryKey":"id","columns":[
              {"name":"id","type":"string","nullable":false},
              {"name":"org_id","type":"string","nullable":false},
              {"name":"project_id","type":"integer","nullable":true}],
             "scopes":[{"pattern":"org:{org_id}"},{"pattern":"project:{projectId}","column":"project_id"}]}]}""");
    static final TableSchema DOCS = SCHEMA.table("docs").orElseThrow();

    @Test
    void effectiveIsRequestedIntersectAllowedInRequestedOrder() {
        Map<String, List<String>> requested = new LinkedHashMap<>();
        requested.put("org_id", List.of("o2", "o1", "o3"));
        requested.put("projectId", List.of("7"));
        Optional<Map<String, List<String>>> e = Scopes.effective(requested,
                Map.of("org_id", List.of("o1", "o2"), "projectId", List.of("*")));
        assertEquals(Optional.of(Map.of("org_id", List.of("o2", "o1"), "projectId", List.of("7"))), e);
        assertEquals(List.of("org_id", "projectId"), List.copyOf(e.get().keySet()));
    }

    @Test
    void revokedWhenResolverFailedAKeyIsNotHeldOrAnIntersectionIsEmpty() {
        Map<String, List<String>> requested = Map.of("org_id", List.of("o1"));
        assertFalse(Scopes.effective(requested, null).isPresent());
        assertFalse(Scopes.effective(requested, Map.of()).isPresent());
        assertFalse(Scopes.effective(requested, Map.of("org_id", List.of("o9"))).isPresent());
        assertFalse(Scopes.effective(Map.of(), Map.of("org_id", List.of("*"))).isPresent());
    }

    @Test
    void writesNeedEveryDeclaredVariableAllowed() {
        Map<String, String> row = Map.of("org_id", "o1", "projectId", "7");
        assertTrue(Scopes.authorizeWrite(DOCS, row, Map.of("org_id", List.of("o1"), "projectId", List.of("*"))));
        assertFalse(Scopes.authorizeWrite(DOCS, row, Map.of("org_id", List.of("o1"))));
        assertFalse(Scopes.authorizeWrite(DOCS, Map.of("org_id", "o1"), Map.of("org_id", List.of("*"),
                "projectId", List.of("*"))));
        assertFalse(Scopes.authorizeWrite(DOCS, row, null));
    }

    @Test
    void storedScopesRenderLikeJavaScriptString() {
        Scopes.Extracted x = Scopes.extract(DOCS, new Object[] {"d1", "o1", 7L});
        assertEquals(Map.of("org_id", "o1", "projectId", "7"), x.scopes());
        assertEquals("projectId", Scopes.extract(DOCS, new Object[] {"d1", "o1", null}).missing());
        assertEquals("org_id", Scopes.extract(DOCS, new Object[] {"d1", "", 7L}).missing());
        assertEquals(Optional.of("3"), Scopes.render(3.0));
        assertEquals(Optional.of("0.5"), Scopes.render(0.5));
        assertEquals(Optional.of("true"), Scopes.render(true));
        assertEquals(Optional.empty(), Scopes.render(new byte[] {1}));
    }

    @Test
    void aResolverReturningAnUndeclaredVariableIsAnInvalidSubscription() {
        SyncException e = assertThrows(SyncException.class,
                () -> Scopes.checkResolvedKeys(Map.of("team", List.of("*")), SCHEMA));
        assertEquals(ErrorCode.SYNC_INVALID_SUBSCRIPTION, e.code());
    }
}

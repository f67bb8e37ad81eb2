package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The WAR as built, deployed unchanged (plus a test probe): health, and the JTA path to PostgreSQL. */
@ExtendWith(ArquillianExtension.class)
class FoundationIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.war("syncular").addClasses(ItProbeResource.class, ItProbeService.class);
    }

    @ArquillianResource
    URL base;

    @Test
    void readinessIsUpWithDatabaseAndSchemaChecks() throws Exception {
        HttpResponse<String> ready = It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200,
                Duration.ofSeconds(90));
        assertTrue(ready.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(ready.body().contains("\"status\":\"UP\""), ready.body());
        assertTrue(ready.body().contains("\"name\":\"database\""), ready.body());
        assertTrue(ready.body().contains("\"name\":\"schema\""), ready.body());
        assertTrue(ready.body().contains("\"reason\":\"reachable\""), ready.body());
        // issue 13: the public probe names no database product or version, no schema file, no version detail
        assertFalse(ready.body().contains("PostgreSQL"), ready.body());
        assertFalse(ready.body().contains("schema version"), ready.body());
        assertFalse(ready.body().contains(".json"), ready.body());
        assertFalse(ready.body().contains("detail"), ready.body());
    }

    @Test
    void theAdminRoleSeesEachCheckWithItsDetail() throws Exception {
        URI admin = base.toURI().resolve("admin/health");
        assertEquals(401, It.get(admin).statusCode());
        HttpResponse<String> r = It.get(admin, It.ADMIN);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("PostgreSQL"), r.body());
        assertTrue(r.body().contains("schema version 1"), r.body());
        assertTrue(r.body().contains("\"reason\":\"reachable\""), r.body());
    }

    @Test
    void livenessAnswers() throws Exception {
        HttpResponse<String> live = It.get(base.toURI().resolve("health/live"));
        assertEquals(200, live.statusCode());
        assertTrue(live.body().contains("\"status\":\"UP\""), live.body());
    }

    @Test
    void httpReachesPostgresThroughJaxRsAndAJtaEjb() throws Exception {
        String note = "committed-" + UUID.randomUUID();
        HttpResponse<String> r = It.post(base.toURI().resolve("it-probe/notes?note=" + note));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().startsWith("17."), "PostgreSQL 17 answered: " + r.body());
        assertEquals(1, countNotes(note));
    }

    @Test
    void aJtaRollbackLeavesNothingWritten() throws Exception {
        It.post(base.toURI().resolve("it-probe/notes?note=table-exists"));
        String note = "rolled-back-" + UUID.randomUUID();
        HttpResponse<String> r = It.post(base.toURI().resolve("it-probe/notes-then-fail?note=" + note));
        assertEquals(500, r.statusCode(), r.body());
        assertEquals(0, countNotes(note));
    }

    @Test
    void withoutAnAuthenticationModeEverySyncRequestIs401() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        HttpResponse<String> r = It.postBody(base.toURI().resolve("sync"), "application/vnd.syncular.sync.v2", "x");
        assertEquals(401, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"code\":\"sync.auth_required\""), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
    }

    @Test
    void withoutTheFlagTheConformanceRoutesAre404AndTheActorHeaderAuthenticatesNobody() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        for (String route : List.of("capabilities", "clock", "max-commit-seq", "horizon-seq", "tables/todos/rows")) {
            assertEquals(404, It.get(base.toURI().resolve("__conformance/" + route)).statusCode(), route);
        }
        assertEquals(404, It.postBody(base.toURI().resolve("__conformance/reset"), "application/json", "{}").statusCode());
        HttpResponse<String> r = It.postBodyWithHeader(base.toURI().resolve("sync"), "application/vnd.syncular.sync.v2",
                "x", "X-Syncular-Actor", "alice");
        assertEquals(401, r.statusCode(), r.body());
    }

    private static int countNotes(String note) throws Exception {
        try (Connection c = It.jdbc();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM it_probe_notes WHERE note = ?")) {
            ps.setString(1, note);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}

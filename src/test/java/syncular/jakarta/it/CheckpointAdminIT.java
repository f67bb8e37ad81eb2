package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code GET admin/checkpoints} (issue 7) behind the {@code syncular-admin} role on both servers: the web.xml
 * constraint answers 401 without credentials and 403 for a user without the role; admin1 (group syncular-admin,
 * created by src/test/servers/prepare.sh in the WildFly application realm and the Payara file realm) gets the JSON.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class CheckpointAdminIT extends DatabaseIsolation {
    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("admin"), Map.of("syncular.auth.mode", "fixed",
                "syncular.backfill.definitions", "later_v2@2:todos->todo_titles"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    URI checkpoints() throws Exception { return base.toURI().resolve("admin/checkpoints"); }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void withoutCredentialsTheAnswerIs401() throws Exception {
        HttpResponse<String> r = It.get(checkpoints());
        assertEquals(401, r.statusCode(), r.body());
    }

    @Test
    void aUserWithoutTheRoleIsForbidden() throws Exception {
        HttpResponse<String> r = It.get(checkpoints(), "Authorization", basic("plain1", "Pl41n!pass"));
        assertEquals(403, r.statusCode(), r.body());
    }

    @Test
    void anAdminGetsTheCheckpointReport() throws Exception {
        HttpResponse<String> r = It.get(checkpoints(), "Authorization", basic("admin1", "Adm1n!pass"));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.toString());
        // the demo schema is version 1; a definition for version 2 is not declared by this process
        assertEquals("{\"runningSchemaVersion\":1,\"declares\":[],\"refusal\":null,\"checkpoints\":[]}", r.body());
    }

    @Test
    void aWrongPasswordIsNotAnAdmin() throws Exception {
        HttpResponse<String> r = It.get(checkpoints(), "Authorization", basic("admin1", "wrong"));
        assertEquals(401, r.statusCode(), r.body());
    }
}

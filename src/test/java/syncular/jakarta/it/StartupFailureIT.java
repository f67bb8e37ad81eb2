package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What only a redeploy can fix fails the deployment, with one log line naming the key or the table and column:
 * a malformed {@code syncular.db.url}, a missing schema file, an invalid schema.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class StartupFailureIT extends DatabaseIsolation {
    @ArquillianResource
    Deployer deployer;

    @Deployment(name = "bad-url", managed = false, testable = false)
    static WebArchive badUrl() {
        return It.withConfig(It.war("bad-url"), Map.of("syncular.db.url", "postgres://localhost/syncular"));
    }

    @Deployment(name = "missing-schema", managed = false, testable = false)
    static WebArchive missingSchema() {
        return It.withConfig(It.war("missing-schema"), Map.of("syncular.schema", "/nonexistent/syncular.ir.json"));
    }

    @Deployment(name = "invalid-schema", managed = false, testable = false)
    static WebArchive invalidSchema() {
        String schema = """
                {"version":2,"tables":[{"name":"tasks","primaryKey":"id","columns":[
                  {"name":"id","type":"string","nullable":false},
                  {"name":"priority","type":"decimal","nullable":true}],
                 "scopes":[{"pattern":"project:{id}"}]}]}""";
        return It.withConfig(It.war("invalid-schema"), Map.of("syncular.schema", "it-invalid-schema.json"))
                .addAsResource(new StringAsset(schema), "it-invalid-schema.json");
    }

    @Test
    void malformedDatabaseUrlFailsDeploymentNamingTheKey() throws Exception {
        assertDeploymentFails("bad-url", "syncular.db.url must be a jdbc:postgresql: URL");
    }

    @Test
    void missingSchemaFileFailsDeploymentNamingTheKey() throws Exception {
        assertDeploymentFails("missing-schema", "syncular.schema: no schema file or class-path resource named");
    }

    @Test
    void invalidSchemaFailsDeploymentNamingTableAndColumn() throws Exception {
        assertDeploymentFails("invalid-schema", "table \"tasks\" column \"priority\": unknown type \"decimal\"");
    }

    private void assertDeploymentFails(String name, String expectedLine) throws Exception {
        long offset = It.logSize();
        try {
            assertThrows(Exception.class, () -> deployer.deploy(name), "the deployment must fail");
        } finally {
            try {
                deployer.undeploy(name); // WildFly keeps a failed deployment registered
            } catch (Exception ignored) {
                // Payara registers nothing for a failed deployment
            }
        }
        String log = It.logSince(offset);
        assertTrue(log.contains("Syncular start-up refused: " + expectedLine),
                () -> "server log lacks the one-line reason \"" + expectedLine + "\"");
    }
}

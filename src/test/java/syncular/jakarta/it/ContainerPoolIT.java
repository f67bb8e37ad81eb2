package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code syncular.datasource} selects a pool the operator defined in the server, and the WAR deploys on both servers
 * with none of the {@code syncular.db.*} keys set: the sentinel defaults in jboss-web.xml keep WildFly's parser
 * happy. Each server's built-in example pool stands in for the operator's pool.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ContainerPoolIT {
    @ArquillianResource
    Deployer deployer;

    @Deployment(name = "pooled", managed = false, testable = false)
    static WebArchive pooled() {
        String pool = It.isWildFly() ? "java:jboss/datasources/ExampleDS" : "jdbc/__default";
        WebArchive war = It.withConfig(It.war("pooled"), Map.of("syncular.datasource", pool));
        // The failsafe environment sets SYNCULAR_DB_*: rename the keys so every expression falls to its default.
        return It.withJbossWeb(war, xml -> xml.replace("env.SYNCULAR_DB_", "env.SYNCULAR_UNSET_DB_")
                .replace("${syncular.db.", "${syncular.unset.db."));
    }

    @Test
    void deploysWithAContainerPoolAndNoDatabaseKeys() throws Exception {
        deployer.deploy("pooled");
        try {
            HttpResponse<String> ready = It.await(It.base("pooled").resolve("health/ready"),
                    r -> r.statusCode() == 200, Duration.ofSeconds(60));
            // Both example pools are H2: the readiness check reached the container's pool, not PostgreSQL.
            assertTrue(ready.body().contains("H2"), ready.body());
        } finally {
            deployer.undeploy("pooled");
        }
    }
}

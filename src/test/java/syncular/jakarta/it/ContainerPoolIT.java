package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
class ContainerPoolIT extends DatabaseIsolation {
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
            // Both example pools are H2: the database check reaches the container's pool (not the PostgreSQL of the
            // failsafe environment), and storage reports, without retrying, that it needs PostgreSQL.
            HttpResponse<String> ready = It.await(It.base("pooled").resolve("health/ready"),
                    r -> r.body().contains("unsupported database"), Duration.ofSeconds(60));
            assertEquals(503, ready.statusCode(), ready.body());
            assertTrue(ready.body().contains("{\"name\":\"database\",\"status\":\"UP\",\"data\":{\"reason\":"
                    + "\"reachable\"}"), ready.body());
            // which product it is, is the admin role's to see (issue 13: the public probe names none)
            HttpResponse<String> detail = It.get(It.base("pooled").resolve("admin/health"), It.ADMIN);
            assertTrue(detail.body().contains("not PostgreSQL"), detail.body());
            assertTrue(detail.body().contains("\"detail\":\"H2"), detail.body());
        } finally {
            deployer.undeploy("pooled");
        }
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
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
 * An unreachable database is not a deployment failure: the WAR deploys while PostgreSQL is down, readiness says
 * DOWN and why, and turns UP by itself once the same database is back on the same port, without a redeploy.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class DatabaseOutageIT extends DatabaseIsolation {
    @ArquillianResource
    Deployer deployer;

    @Deployment(name = "outage", managed = false, testable = false)
    static WebArchive outage() {
        return It.withConfig(It.war("outage"), Map.of("syncular.readiness.retry-max-ms", "1000"));
    }

    @Test
    void readinessIsDownWhileTheDatabaseIsUnreachableThenUpWithoutRedeploy() throws Exception {
        URI ready = It.base("outage").resolve("health/ready");
        EmbeddedPgSession.stop();
        try {
            deployer.deploy("outage");
            HttpResponse<String> down = It.await(ready, r -> r.body().contains("unreachable"), Duration.ofSeconds(60));
            assertEquals(503, down.statusCode(), down.body());
            assertTrue(down.body().contains("\"status\":\"DOWN\""), down.body());
            // issue 13: the driver's error (host, port, user, exception class) stays out of the public probe
            assertFalse(down.body().contains("localhost") || down.body().contains("127.0.0.1"), down.body());
            assertFalse(down.body().contains("Exception") || down.body().contains("refused"), down.body());
            HttpResponse<String> detail = It.get(It.base("outage").resolve("admin/health"), It.ADMIN);
            assertEquals(503, detail.statusCode(), detail.body());
            assertTrue(detail.body().contains("unreachable: "), detail.body());

            EmbeddedPgSession.start();
            HttpResponse<String> up = It.await(ready, r -> r.statusCode() == 200, Duration.ofSeconds(60));
            assertTrue(up.body().contains("\"status\":\"UP\""), up.body());
            assertFalse(up.body().contains("PostgreSQL"), up.body());
            assertTrue(It.get(It.base("outage").resolve("admin/health"), It.ADMIN).body().contains("PostgreSQL"));
        } finally {
            EmbeddedPgSession.start();
            deployer.undeploy("outage");
        }
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
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
 * An unreachable database is not a deployment failure: the WAR deploys, readiness says DOWN and why, and turns UP
 * by itself once the database appears, without a redeploy.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class DatabaseOutageIT {
    private static final int SPARE_PORT = Integer.getInteger("syncular.it.pg.spare.port");
    private static final String SPARE_URL = "jdbc:postgresql://localhost:" + SPARE_PORT + "/postgres";

    @ArquillianResource
    Deployer deployer;

    @Deployment(name = "outage", managed = false, testable = false)
    static WebArchive outage() {
        WebArchive war = It.withConfig(It.war("outage"), Map.of(
                "syncular.db.url", SPARE_URL,
                "syncular.readiness.retry-max-ms", "1000"));
        // WildFly takes the DataSource from jboss-web.xml only: point that copy at the spare port as well.
        return It.withJbossWeb(war, xml -> xml.replaceFirst("<url>[^<]*</url>", "<url>" + SPARE_URL + "</url>"));
    }

    @Test
    void readinessIsDownWhileTheDatabaseIsUnreachableThenUpWithoutRedeploy() throws Exception {
        URI ready = It.base("outage").resolve("health/ready");
        deployer.deploy("outage");
        EmbeddedPostgres late = null;
        try {
            HttpResponse<String> down = It.await(ready, r -> r.body().contains("unreachable"), Duration.ofSeconds(60));
            assertEquals(503, down.statusCode(), down.body());
            assertTrue(down.body().contains("\"status\":\"DOWN\""), down.body());

            late = EmbeddedPostgres.builder().setPort(SPARE_PORT)
                    .setOverrideWorkingDirectory(new File(System.getProperty("ot.epg.working-dir", "target/embedded-pg")))
                    .start();
            HttpResponse<String> up = It.await(ready, r -> r.statusCode() == 200, Duration.ofSeconds(60));
            assertTrue(up.body().contains("\"status\":\"UP\""), up.body());
        } finally {
            deployer.undeploy("outage");
            if (late != null) late.close();
        }
    }
}

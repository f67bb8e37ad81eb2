package syncular.jakarta.it;

import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;

/**
 * Base of every IT class: the IT classes share one PostgreSQL database, and a database holds one schema, so each
 * class leaves it empty for the next (which may deploy another schema at the same version — a real server would
 * rightly refuse that as a layout mismatch). Runs before Arquillian undeploys the class's deployment.
 */
abstract class DatabaseIsolation {
    @AfterAll
    static void leaveAnEmptyDatabase() throws Exception {
        try (Connection c = It.jdbc(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA public CASCADE");
            s.execute("CREATE SCHEMA public");
        }
    }
}

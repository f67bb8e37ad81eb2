package syncular.jakarta.it;

import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of every IT class: the IT classes share one PostgreSQL database, and a database holds one schema, so each
 * class leaves it empty for the next (which may deploy another schema at the same version — a real server would
 * rightly refuse that as a layout mismatch). Runs before Arquillian undeploys the class's deployment, and after a
 * {@code *MicroIT}'s own {@code @AfterAll} has stopped its Payara Micro nodes (a superclass's runs last).
 */
@ExtendWith(ItExecution.class)
abstract class DatabaseIsolation {
    @AfterAll
    static void leaveAnEmptyDatabase() throws Exception {
        try (Connection c = It.jdbc(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA public CASCADE");
            s.execute("CREATE SCHEMA public");
        }
    }
}

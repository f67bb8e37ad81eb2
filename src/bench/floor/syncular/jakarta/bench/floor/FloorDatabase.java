package syncular.jakarta.bench.floor;

import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.annotation.WebListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * The database floor (built as {@code syncular-db.war}, whose web.xml sets {@code floor.database}): the least a server
 * whose commit log lives in PostgreSQL does per reconnect and per push, through the container's pool (the WAR's own
 * datasource, jboss-web.xml): a push is one INSERT of its body; a round is one SELECT of the newest commits. No
 * identity, no client record, no cursor written back. Without the parameter the floor touches no database.
 */
@WebListener
public class FloorDatabase implements ServletContextListener {
    private static volatile DataSource source;

    @Override
    public void contextInitialized(ServletContextEvent event) {
        if (!"true".equals(event.getServletContext().getInitParameter("floor.database"))) return;
        try {
            DataSource ds = InitialContext.doLookup("java:app/jdbc/syncular");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS floor_log (seq bigserial PRIMARY KEY, body bytea NOT NULL)");
            }
            source = ds;
        } catch (NamingException | SQLException e) {
            throw new IllegalStateException("the database floor has no database", e);
        }
    }

    static boolean enabled() {
        return source != null;
    }

    /** One round trip: the pushed body appended to the log. */
    static void append(byte[] body) {
        try (Connection c = source.getConnection();
             PreparedStatement p = c.prepareStatement("INSERT INTO floor_log (body) VALUES (?)")) {
            p.setBytes(1, body);
            p.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One round trip: the log's newest three commits, read whole; returns their bytes. */
    static long readTail() {
        try (Connection c = source.getConnection();
             PreparedStatement p = c.prepareStatement("SELECT seq, body FROM floor_log WHERE seq > "
                     + "(SELECT coalesce(max(seq), 0) - 3 FROM floor_log) ORDER BY seq");
             ResultSet r = p.executeQuery()) {
            long bytes = 0;
            while (r.next()) bytes += r.getBytes(2).length;
            return bytes;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

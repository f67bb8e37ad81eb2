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
 *
 * <p>The two-trip floor ({@code syncular-db2.war}, {@code floor.attach} as well): what our server cannot go below
 * while every request reads the serve gate before its body and again after it (seeds/002), and a socket's attach
 * reads its client record for the hello (§8.1) and its binding (§1.5): the open reads the client's row (one round
 * trip), and the round stores the client's cursor in the round trip that reads the newest commits. Still no
 * identity, no gate, no scopes.
 */
@WebListener
public class FloorDatabase implements ServletContextListener {
    private static volatile DataSource source;
    private static volatile boolean attach;

    @Override
    public void contextInitialized(ServletContextEvent event) {
        if (!"true".equals(event.getServletContext().getInitParameter("floor.database"))) return;
        try {
            DataSource ds = InitialContext.doLookup("java:app/jdbc/syncular");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS floor_log (seq bigserial PRIMARY KEY, body bytea NOT NULL)");
                s.execute("CREATE TABLE IF NOT EXISTS floor_clients (client_id text PRIMARY KEY, "
                        + "cursor bigint NOT NULL)");
            }
            attach = "true".equals(event.getServletContext().getInitParameter("floor.attach"));
            source = ds;
        } catch (NamingException | SQLException e) {
            throw new IllegalStateException("the database floor has no database", e);
        }
    }

    static boolean enabled() {
        return source != null;
    }

    /** Whether a socket's open reads its client's row, and its round stores the client's cursor. */
    static boolean attaches() {
        return attach;
    }

    /** One round trip: the client's row (the cursor its hello carries; −1: none yet). */
    static long readClient(String clientId) {
        try (Connection c = source.getConnection();
             PreparedStatement p = c.prepareStatement("SELECT cursor FROM floor_clients WHERE client_id = ?")) {
            p.setString(1, clientId);
            try (ResultSet r = p.executeQuery()) {
                return r.next() ? r.getLong(1) : -1;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One round trip: the client's cursor stored (the log's head), then the log's newest three commits read. */
    static long storeCursorThenReadTail(String clientId) {
        try (Connection c = source.getConnection();
             PreparedStatement p = c.prepareStatement("INSERT INTO floor_clients (client_id, cursor) "
                     + "SELECT ?, coalesce(max(seq), 0) FROM floor_log ON CONFLICT (client_id) DO UPDATE "
                     + "SET cursor = EXCLUDED.cursor; SELECT seq, body FROM floor_log WHERE seq > "
                     + "(SELECT coalesce(max(seq), 0) - 3 FROM floor_log) ORDER BY seq")) {
            p.setString(1, clientId);
            p.execute();
            long bytes = 0;
            while (p.getMoreResults() || p.getUpdateCount() != -1) {
                try (ResultSet r = p.getResultSet()) {
                    if (r != null) while (r.next()) bytes += r.getBytes(2).length;
                }
            }
            return bytes;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
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

package syncular.jakarta.it;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * Test-only EJB added to the IT deployment: writes through the WAR's JTA DataSource so the IT can prove
 * HTTP → JAX-RS → EJB (JTA) → JDBC → PostgreSQL, and that a rolled-back transaction leaves nothing behind.
 */
@Stateless
public class ItProbeService {
    @Resource(lookup = "java:app/jdbc/syncular")
    DataSource ds;

    /** Inserts a note in the caller's (container) transaction; returns the database's product version. */
    public String insert(String note) throws SQLException {
        try (Connection c = ds.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS it_probe_notes (id BIGSERIAL PRIMARY KEY, note TEXT NOT NULL)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO it_probe_notes (note) VALUES (?)")) {
                ps.setString(1, note);
                ps.executeUpdate();
            }
            try (ResultSet rs = c.createStatement().executeQuery("SHOW server_version")) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** Inserts, then fails with a system exception: the container must roll the insert back. */
    public void insertThenFail(String note) throws SQLException {
        insert(note);
        throw new IllegalStateException("deliberate failure after the insert");
    }
}

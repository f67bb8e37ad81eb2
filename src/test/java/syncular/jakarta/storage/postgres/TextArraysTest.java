package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@link TextArrays}: what a statement casting {@code ?::text[]} reads back is exactly what was bound. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TextArraysTest {
    private EmbeddedPostgresSupport.Pool db;

    @BeforeAll
    void setUp() { db = EmbeddedPostgresSupport.newDatabase(); }

    @AfterAll
    void tearDown() { db.close(); }

    private List<String> roundTrip(List<String> values) throws SQLException {
        try (Connection c = db.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT v FROM unnest(?::text[]) WITH ORDINALITY AS a(v, n) ORDER BY n")) {
            TextArrays.bind(ps, 1, values);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1));
            }
            return out;
        }
    }

    @Test
    void elementsThatArrayLiteralsTreatSpeciallyComeBackAsBound() throws SQLException {
        List<String> values = List.of("", "NULL", "null", "a,b", "{x}", "\"quoted\"", "back\\slash", "\\\"",
                " spaced ", "tab\tand\nnewline", "ünïcødé 😀", "'single'", "p7");
        assertEquals(values, roundTrip(values));
    }

    @Test
    void noValuesIsTheEmptyArray() throws SQLException {
        assertEquals(List.of(), roundTrip(List.of()));
        assertEquals("{}", TextArrays.literal(List.of()));
    }

    @Test
    void oneValueMatchesAsAnyOfTheArray() throws SQLException {
        try (Connection c = db.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT 'a\"b' = ANY(?::text[]), 'ab' = ANY(?::text[])")) {
            TextArrays.bind(ps, 1, List.of("a\"b"));
            TextArrays.bind(ps, 2, List.of("a\"b"));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(List.of(true, false), List.of(rs.getBoolean(1), rs.getBoolean(2)));
            }
        }
    }
}

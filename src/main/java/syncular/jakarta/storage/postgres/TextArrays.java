package syncular.jakarta.storage.postgres;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;

/**
 * A {@code text[]} parameter bound as its literal ({@code {"a","b"}}) to a statement that casts it
 * ({@code ?::text[]}). The request path binds one or more per statement; {@code Connection.createArrayOf} looks the
 * array type up in the driver's type cache under its lock on every call (3 % of a reconnect storm's samples on
 * WildFly, issue 15), a string binds without either.
 */
final class TextArrays {
    private TextArrays() { }

    static void bind(PreparedStatement ps, int index, Collection<String> values) throws SQLException {
        ps.setString(index, literal(values));
    }

    /** Every element quoted, {@code "} and {@code \} escaped with {@code \}: no element is read as NULL or split. */
    static String literal(Collection<String> values) {
        StringBuilder b = new StringBuilder(2 + values.size() * 16).append('{');
        boolean first = true;
        for (String v : values) {
            if (!first) b.append(',');
            first = false;
            b.append('"');
            for (int i = 0; i < v.length(); i++) {
                char ch = v.charAt(i);
                if (ch == '"' || ch == '\\') b.append('\\');
                b.append(ch);
            }
            b.append('"');
        }
        return b.append('}').toString();
    }
}

package syncular.jakarta.storage.postgres;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import syncular.jakarta.schema.ColumnSchema;

/**
 * The validators' authoritative SQL read (seeds/001 validate.d.ts {@code queryAuthoritative}, SPEC §6.7/§6.8) on the
 * push transaction's own connection: a validator must never take a second connection, which would read committed
 * state without the staged writes, or wait forever once push transactions hold every pooled connection.
 *
 * <p>Binding to the partition: the host's SELECT becomes a subquery under a WITH list that shadows every schema
 * table it names with a CTE of the same name reading only this partition's rows and the table's schema columns:
 * <pre>WITH "tasks" AS (SELECT "id", "title", … FROM "tasks" WHERE "_sync_partition" = ?)
 * SELECT * FROM (&lt;host SQL&gt;) AS "_syncular_query"</pre>
 * An unqualified name resolves to a CTE before a table, so every reference the host writes the way its local
 * client SQL is written reads the partition. Inside its own body a non-recursive CTE is not yet visible, so there
 * the name still means the real table. The host SQL is the host's trusted code (like a resolver); this binding keeps
 * honest SQL partition-local, it is not a sandbox against SQL written to escape it (a schema-qualified name does).
 *
 * <p>Read-only: the text must be one statement starting with SELECT or WITH, and because it runs as a subquery
 * PostgreSQL itself refuses a data-modifying WITH there ("must be at the top level").
 */
final class PostgresValidationReads {
    /** A validator reads to decide, not to export: beyond this the query is a host bug, refused. */
    static final int MAX_ROWS = 10_000;

    private PostgresValidationReads() { }

    static List<Map<String, Object>> query(Connection c, Map<String, RowTable> tables, String partition, String sql,
                                           List<?> params) {
        if (sql == null || sql.isBlank()) throw new IllegalArgumentException("authoritative query: empty SQL");
        String masked = mask(sql);
        if (masked.indexOf(';') >= 0) {
            throw new IllegalArgumentException("authoritative query must be exactly one statement (no ';')");
        }
        String head = masked.stripLeading().toLowerCase(Locale.ROOT);
        if (!(head.startsWith("select") || head.startsWith("with"))) {
            throw new IllegalArgumentException("authoritative query must be a SELECT (or WITH … SELECT)");
        }
        List<RowTable> named = namedTables(masked, tables);
        String text = bound(sql, named);
        try (PreparedStatement ps = c.prepareStatement(text)) {
            int i = 1;
            for (int n = 0; n < named.size(); n++) ps.setString(i++, partition);
            for (Object p : params) bind(ps, i++, p);
            ps.setMaxRows(MAX_ROWS + 1);
            List<Map<String, Object>> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                int columns = md.getColumnCount();
                while (rs.next()) {
                    if (rows.size() == MAX_ROWS) {
                        throw new IllegalArgumentException("authoritative query returned more than " + MAX_ROWS
                                + " rows; a validator should ask for less (LIMIT, aggregates)");
                    }
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int col = 1; col <= columns; col++) row.put(md.getColumnLabel(col), value(rs, md, col));
                    rows.add(row);
                }
            }
            return rows;
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    /** The WITH list for {@code named}, then the host SQL as a subquery. */
    static String bound(String sql, List<RowTable> named) {
        StringBuilder out = new StringBuilder();
        if (!named.isEmpty()) {
            out.append("WITH ");
            for (int n = 0; n < named.size(); n++) {
                RowTable t = named.get(n);
                if (n > 0) out.append(",\n     ");
                out.append(t.quoted).append(" AS (SELECT ");
                List<ColumnSchema> cols = t.schema.columns();
                for (int k = 0; k < cols.size(); k++) {
                    if (k > 0) out.append(", ");
                    out.append(RowTable.quoteIdent(cols.get(k).name()));
                }
                out.append(" FROM ").append(t.quoted).append(" WHERE ")
                        .append(RowTable.quoteIdent(RowTable.PARTITION)).append(" = ?)");
            }
            out.append('\n');
        }
        // the newline before ')' ends a trailing "--" comment of the host SQL
        return out.append("SELECT * FROM (\n").append(sql).append("\n) AS \"_syncular_query\"").toString();
    }

    /**
     * Schema tables the SQL may name: an unquoted identifier equal to the name up to case (PostgreSQL folds it to
     * lower case, so it must then also be the lower-case name), or a quoted identifier equal to it exactly. Words
     * inside literals and comments are masked out first. An extra CTE would be harmless (PostgreSQL skips an
     * unreferenced CTE), a missing one would read other partitions: matching errs on the side of binding.
     */
    static List<RowTable> namedTables(String masked, Map<String, RowTable> tables) {
        java.util.Set<String> words = new java.util.HashSet<>();
        int i = 0;
        int n = masked.length();
        while (i < n) {
            char ch = masked.charAt(i);
            if (ch == '"') {
                int end = i + 1;
                StringBuilder ident = new StringBuilder();
                while (end < n) {
                    char d = masked.charAt(end);
                    if (d == '"' && end + 1 < n && masked.charAt(end + 1) == '"') {
                        ident.append('"');
                        end += 2;
                    } else if (d == '"') {
                        break;
                    } else {
                        ident.append(d);
                        end++;
                    }
                }
                words.add(ident.toString());
                i = end + 1;
            } else if (Character.isLetter(ch) || ch == '_') {
                int end = i + 1;
                while (end < n && (Character.isLetterOrDigit(masked.charAt(end)) || masked.charAt(end) == '_'
                        || masked.charAt(end) == '$')) end++;
                words.add(masked.substring(i, end).toLowerCase(Locale.ROOT));
                i = end;
            } else {
                i++;
            }
        }
        List<RowTable> named = new ArrayList<>();
        for (RowTable t : tables.values()) if (words.contains(t.schema.name())) named.add(t);
        return named;
    }

    /**
     * {@code sql} with the contents of string literals (standard, E'', dollar-quoted) and comments (line and nested
     * block) replaced by spaces, same length; quoted identifiers are kept, they name relations.
     */
    static String mask(String sql) {
        char[] out = sql.toCharArray();
        int n = out.length;
        int i = 0;
        while (i < n) {
            char ch = sql.charAt(i);
            if (ch == '\'') {
                boolean escapes = i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                        && (i < 2 || !Character.isLetterOrDigit(sql.charAt(i - 2)));
                int j = i + 1;
                while (j < n) {
                    char d = sql.charAt(j);
                    if (escapes && d == '\\') {
                        j += 2;
                    } else if (d == '\'' && j + 1 < n && sql.charAt(j + 1) == '\'') {
                        j += 2;
                    } else if (d == '\'') {
                        break;
                    } else {
                        j++;
                    }
                }
                i = blank(out, i, Math.min(j + 1, n));
            } else if (ch == '"') {
                int j = i + 1;
                while (j < n && !(sql.charAt(j) == '"' && (j + 1 >= n || sql.charAt(j + 1) != '"'))) {
                    j += sql.charAt(j) == '"' ? 2 : 1;
                }
                i = Math.min(j + 1, n);
            } else if (ch == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int j = sql.indexOf('\n', i);
                i = blank(out, i, j < 0 ? n : j);
            } else if (ch == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int depth = 1;
                int j = i + 2;
                while (j < n && depth > 0) {
                    if (sql.startsWith("/*", j)) {
                        depth++;
                        j += 2;
                    } else if (sql.startsWith("*/", j)) {
                        depth--;
                        j += 2;
                    } else {
                        j++;
                    }
                }
                i = blank(out, i, j);
            } else if (ch == '$' && (i == 0 || !Character.isLetterOrDigit(sql.charAt(i - 1)))) {
                int j = i + 1;
                while (j < n && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) j++;
                if (j < n && sql.charAt(j) == '$' && (j == i + 1 || !Character.isDigit(sql.charAt(i + 1)))) {
                    String tag = sql.substring(i, j + 1);
                    int close = sql.indexOf(tag, j + 1);
                    i = blank(out, i, close < 0 ? n : close + tag.length());
                } else {
                    i++;
                }
            } else {
                i++;
            }
        }
        return new String(out);
    }

    private static int blank(char[] out, int from, int to) {
        for (int k = from; k < to; k++) if (out[k] != '\n') out[k] = ' ';
        return to;
    }

    private static void bind(PreparedStatement ps, int index, Object p) throws SQLException {
        if (p == null) {
            ps.setNull(index, Types.NULL);
        } else if (p instanceof String s) {
            ps.setString(index, s);
        } else if (p instanceof Long || p instanceof Integer || p instanceof Short) {
            ps.setLong(index, ((Number) p).longValue());
        } else if (p instanceof Double || p instanceof Float) {
            ps.setDouble(index, ((Number) p).doubleValue());
        } else if (p instanceof Boolean b) {
            ps.setBoolean(index, b);
        } else if (p instanceof byte[] b) {
            ps.setBytes(index, b);
        } else if (p instanceof BigDecimal d) {
            ps.setBigDecimal(index, d);
        } else {
            throw new IllegalArgumentException("authoritative query parameter " + index
                    + " has an unsupported type " + p.getClass().getSimpleName());
        }
    }

    private static Object value(ResultSet rs, ResultSetMetaData md, int col) throws SQLException {
        String type = md.getColumnTypeName(col);
        if ("json".equals(type) || "jsonb".equals(type)) return rs.getString(col);
        Object v = rs.getObject(col);
        if (v instanceof Integer || v instanceof Short) return ((Number) v).longValue();
        if (v instanceof Float f) return f.doubleValue();
        if (v instanceof java.sql.Array a) return java.util.Arrays.asList((Object[]) a.getArray());
        return v;
    }
}

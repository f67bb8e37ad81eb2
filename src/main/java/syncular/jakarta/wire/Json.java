package syncular.jakarta.wire;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 JSON parser and a writer with JavaScript {@code JSON.stringify} string escaping (SPEC §11.2,
 * SPEC-DIGEST §17). Any value is accepted at the top level; trailing tokens are an error.
 *
 * <p>Parsed values: {@link Map} (insertion-ordered; a repeated key keeps the last value, as {@code JSON.parse}
 * does), {@link List}, {@link String}, {@link BigDecimal}, {@link Boolean}, and {@code null} for JSON null. A number
 * whose exponent is beyond BigDecimal's range (e.g. {@code 1e9999999999}) parses to the {@link Double} JavaScript
 * would give it (±Infinity or ±0) rather than failing.
 */
public final class Json {
    /** Deeper nesting is refused rather than risking the parser's stack. */
    public static final int MAX_DEPTH = 512;

    private final String text;
    private int pos;

    private Json(String text) { this.text = text; }

    /** Parses one JSON value; throws {@link JsonException} (never echoing the text) when it is not JSON. */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.skipWs();
        Object v = p.value(0);
        p.skipWs();
        if (p.pos != text.length()) throw p.fail("trailing characters after the JSON value");
        return v;
    }

    /** True iff {@code text} is exactly one JSON value (surrounding whitespace allowed). */
    public static boolean isValid(String text) {
        try {
            parse(text);
            return true;
        } catch (JsonException e) {
            return false;
        }
    }

    /** A JSON syntax error: position only, never the offending text. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        JsonException(String message) { super(message, null, false, false); }
    }

    private JsonException fail(String what) {
        return new JsonException(what + " at character " + pos);
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) throw fail("JSON nested deeper than " + MAX_DEPTH);
        if (pos >= text.length()) throw fail("unexpected end of JSON");
        char c = text.charAt(pos);
        switch (c) {
            case '{': return object(depth);
            case '[': return array(depth);
            case '"': return string();
            case 't': literal("true"); return Boolean.TRUE;
            case 'f': literal("false"); return Boolean.FALSE;
            case 'n': literal("null"); return null;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number();
                throw fail("unexpected character");
        }
    }

    private Map<String, Object> object(int depth) {
        pos++;
        Map<String, Object> m = new LinkedHashMap<>();
        skipWs();
        if (peek() == '}') { pos++; return m; }
        while (true) {
            skipWs();
            if (peek() != '"') throw fail("expected an object key");
            String k = string();
            skipWs();
            if (peek() != ':') throw fail("expected ':'");
            pos++;
            skipWs();
            m.put(k, value(depth + 1));
            skipWs();
            char c = peek();
            pos++;
            if (c == '}') return m;
            if (c != ',') { pos--; throw fail("expected ',' or '}'"); }
        }
    }

    private List<Object> array(int depth) {
        pos++;
        List<Object> l = new ArrayList<>();
        skipWs();
        if (peek() == ']') { pos++; return l; }
        while (true) {
            skipWs();
            l.add(value(depth + 1));
            skipWs();
            char c = peek();
            pos++;
            if (c == ']') return l;
            if (c != ',') { pos--; throw fail("expected ',' or ']'"); }
        }
    }

    private String string() {
        pos++; // opening quote
        StringBuilder sb = null;
        int start = pos;
        while (true) {
            if (pos >= text.length()) throw fail("unterminated string");
            char c = text.charAt(pos);
            if (c == '"') {
                String s = sb == null ? text.substring(start, pos) : sb.append(text, start, pos).toString();
                pos++;
                return s;
            }
            if (c < 0x20) throw fail("control character in string");
            if (c == '\\') {
                if (sb == null) sb = new StringBuilder();
                sb.append(text, start, pos);
                pos++;
                if (pos >= text.length()) throw fail("unterminated escape");
                char e = text.charAt(pos++);
                switch (e) {
                    case '"': sb.append('"'); break;
                    case '\\': sb.append('\\'); break;
                    case '/': sb.append('/'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'n': sb.append('\n'); break;
                    case 'r': sb.append('\r'); break;
                    case 't': sb.append('\t'); break;
                    case 'u':
                        if (pos + 4 > text.length()) throw fail("short \\u escape");
                        int cp = 0;
                        for (int i = 0; i < 4; i++) {
                            int d = Character.digit(text.charAt(pos + i), 16);
                            if (d < 0) throw fail("bad \\u escape");
                            cp = cp * 16 + d;
                        }
                        pos += 4;
                        sb.append((char) cp);
                        break;
                    default:
                        pos--;
                        throw fail("bad escape");
                }
                start = pos;
            } else {
                pos++;
            }
        }
    }

    private Number number() {
        int start = pos;
        if (peek() == '-') pos++;
        if (peek() == '0') {
            pos++;
        } else if (isDigit(peek())) {
            while (isDigit(peek())) pos++;
        } else {
            throw fail("bad number");
        }
        if (peek() == '.') {
            pos++;
            if (!isDigit(peek())) throw fail("bad number fraction");
            while (isDigit(peek())) pos++;
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') pos++;
            if (!isDigit(peek())) throw fail("bad number exponent");
            while (isDigit(peek())) pos++;
        }
        String lexeme = text.substring(start, pos);
        try {
            return new BigDecimal(lexeme);
        } catch (NumberFormatException | ArithmeticException e) {
            // The lexeme is valid RFC 8259 but its exponent exceeds BigDecimal's int scale. JSON.parse accepts it
            // (as ±Infinity or ±0), so it must not fail validation: fall back to the double it denotes.
            return Double.parseDouble(lexeme);
        }
    }

    private void literal(String word) {
        if (!text.startsWith(word, pos)) throw fail("bad literal");
        pos += word.length();
    }

    private static boolean isDigit(char c) { return c >= '0' && c <= '9'; }

    private char peek() { return pos < text.length() ? text.charAt(pos) : '\0'; }

    private void skipWs() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
            else break;
        }
    }

    // ---------------------------------------------------------------- writing

    /**
     * Writes a value as compact JSON, escaping strings exactly like JavaScript {@code JSON.stringify}: {@code \"},
     * {@code \\}, {@code \b \f \n \r \t}, other controls as lowercase {@code \\u00xx}, lone surrogates as lowercase
     * {@code \\uxxxx}, everything else literal. Maps keep their iteration order.
     */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value);
        return sb.toString();
    }

    public static void write(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String s) {
            writeString(sb, s);
        } else if (v instanceof Boolean b) {
            sb.append(b.booleanValue());
        } else if (v instanceof BigDecimal d) {
            sb.append(jsNumber(d));
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            sb.append(((Number) v).longValue());
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) sb.append("null");
            else sb.append(jsNumber(BigDecimal.valueOf(d)));
        } else if (v instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) sb.append(',');
                first = false;
                writeString(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Iterable<?> it) {
            sb.append('[');
            boolean first = true;
            for (Object o : it) {
                if (!first) sb.append(',');
                first = false;
                write(sb, o);
            }
            sb.append(']');
        } else if (v instanceof RawJson r) {
            sb.append(r.text());
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    /** Already-valid JSON text, embedded verbatim by {@link #write}. */
    public record RawJson(String text) { }

    /** A number as JavaScript's {@code String(n)} prints it for integral values; plain decimal otherwise. */
    static String jsNumber(BigDecimal d) {
        BigDecimal s = d.stripTrailingZeros();
        if (s.scale() <= 0 && s.abs().compareTo(BigDecimal.valueOf(1e21)) < 0) return s.toBigInteger().toString();
        return String.valueOf(d.doubleValue()).replace("E", "e+").replace("e+-", "e-");
    }

    public static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\b': sb.append("\\b"); break;
                case '\f': sb.append("\\f"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        hex4(sb, c);
                    } else if (Character.isHighSurrogate(c)) {
                        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                            sb.append(c).append(s.charAt(++i));
                        } else {
                            hex4(sb, c); // well-formed JSON.stringify escapes lone surrogates
                        }
                    } else if (Character.isLowSurrogate(c)) {
                        hex4(sb, c);
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    private static void hex4(StringBuilder sb, char c) {
        sb.append("\\u");
        String h = Integer.toHexString(c);
        for (int k = h.length(); k < 4; k++) sb.append('0');
        sb.append(h);
    }
}

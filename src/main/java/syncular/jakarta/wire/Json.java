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

    /**
     * True iff {@code text} is exactly one RFC 8259 JSON value (surrounding whitespace allowed), as
     * {@code JSON.parse} decides it. Syntax only, without building values or allocating per token, and iterative,
     * so unlike {@link #parse} it has no nesting limit: the wire's {@code json} check must not refuse what the
     * reference accepts (SPEC Conventions {@code json}).
     */
    public static boolean isValid(String text) {
        int n = text.length();
        byte[] stack = new byte[16]; // 1 = inside an object, 2 = inside an array
        int depth = 0;
        int i = ws(text, 0);
        while (true) {
            // a value starts at i
            if (i >= n) return false;
            char c = text.charAt(i);
            if (c == '{' || c == '[') {
                i = ws(text, i + 1);
                if (i < n && text.charAt(i) == (c == '{' ? '}' : ']')) {
                    i++;
                } else {
                    if (depth == stack.length) stack = java.util.Arrays.copyOf(stack, depth * 2);
                    stack[depth++] = (byte) (c == '{' ? 1 : 2);
                    if (c == '{' && (i = member(text, i)) < 0) return false;
                    continue;
                }
            } else if (c == '"') {
                if ((i = skipString(text, i)) < 0) return false;
            } else if (c == 't') {
                if (!text.startsWith("true", i)) return false;
                i += 4;
            } else if (c == 'f') {
                if (!text.startsWith("false", i)) return false;
                i += 5;
            } else if (c == 'n') {
                if (!text.startsWith("null", i)) return false;
                i += 4;
            } else if ((i = skipNumber(text, i)) < 0) {
                return false;
            }
            // after a value: close containers, or move to the next element
            while (true) {
                i = ws(text, i);
                if (depth == 0) return i == n;
                if (i >= n) return false;
                char d = text.charAt(i);
                boolean inObject = stack[depth - 1] == 1;
                if (d == ',') {
                    i = ws(text, i + 1);
                    if (inObject && (i = member(text, i)) < 0) return false;
                    break;
                }
                if (d != (inObject ? '}' : ']')) return false;
                depth--;
                i++;
            }
        }
    }

    /** At an object member: {@code "key" :} then whitespace; returns the value's index or −1. */
    private static int member(String t, int i) {
        if (i >= t.length() || t.charAt(i) != '"') return -1;
        if ((i = skipString(t, i)) < 0) return -1;
        i = ws(t, i);
        if (i >= t.length() || t.charAt(i) != ':') return -1;
        return ws(t, i + 1);
    }

    private static int ws(String t, int i) {
        while (i < t.length()) {
            char c = t.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
            i++;
        }
        return i;
    }

    /** From an opening quote; returns the index after the closing quote or −1. */
    private static int skipString(String t, int i) {
        int n = t.length();
        i++;
        while (i < n) {
            char c = t.charAt(i);
            if (c == '"') return i + 1;
            if (c < 0x20) return -1;
            if (c == '\\') {
                if (++i >= n) return -1;
                char e = t.charAt(i);
                if (e == 'u') {
                    if (i + 4 >= n) return -1;
                    for (int k = 1; k <= 4; k++) if (hex(t.charAt(i + k)) < 0) return -1;
                    i += 4;
                } else if ("\"\\/bfnrt".indexOf(e) < 0) {
                    return -1;
                }
            }
            i++;
        }
        return -1;
    }

    /** RFC 8259 number grammar; returns the index after it or −1. */
    private static int skipNumber(String t, int i) {
        int n = t.length();
        if (i < n && t.charAt(i) == '-') i++;
        if (i >= n) return -1;
        if (t.charAt(i) == '0') {
            i++;
        } else if (isDigit(t.charAt(i))) {
            while (i < n && isDigit(t.charAt(i))) i++;
        } else {
            return -1;
        }
        if (i < n && t.charAt(i) == '.') {
            if (++i >= n || !isDigit(t.charAt(i))) return -1;
            while (i < n && isDigit(t.charAt(i))) i++;
        }
        if (i < n && (t.charAt(i) == 'e' || t.charAt(i) == 'E')) {
            i++;
            if (i < n && (t.charAt(i) == '+' || t.charAt(i) == '-')) i++;
            if (i >= n || !isDigit(t.charAt(i))) return -1;
            while (i < n && isDigit(t.charAt(i))) i++;
        }
        return i;
    }

    /** An ASCII hex digit's value, or −1 (Character.digit would also take non-ASCII digits, which JSON does not). */
    private static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
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
                            int d = hex(text.charAt(pos + i));
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

package syncular.jakarta.wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Bounded, code-like host rejection metadata carried by PUSH_RESULT_DETAILS (SPEC §6.3.1): at least one of
 * {@code fieldPaths} (1–32 unique schema paths ≤ 160 chars), {@code reason} and {@code requiredAction} (stable
 * tokens ≤ 96 chars), {@code references} (1–16 token keys ≤ 64 chars → trimmed, control-free values ≤ 256 UTF-8
 * bytes); ≤ 4096 bytes encoded. Absent members are {@code null}. The text form is normalized (member order
 * fieldPaths, reason, requiredAction, references; reference keys sorted), as the reference codec re-encodes it.
 */
public record RejectionDetails(List<String> fieldPaths, String reason, String requiredAction, Map<String, String> references) {
    public static final int MAX_ENCODED_BYTES = 4096;
    private static final Pattern FIELD_PATH = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*");
    private static final Pattern TOKEN = Pattern.compile("[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*");

    /** Validates; violations are {@link IllegalArgumentException} (the decoder maps them to a decode error). */
    public RejectionDetails {
        if (fieldPaths != null) {
            if (fieldPaths.isEmpty() || fieldPaths.size() > 32) throw new IllegalArgumentException("fieldPaths must hold 1-32 paths");
            Set<String> seen = new HashSet<>();
            for (String p : fieldPaths) {
                if (p == null || p.isEmpty() || p.length() > 160 || !FIELD_PATH.matcher(p).matches()) {
                    throw new IllegalArgumentException("fieldPaths entries must be schema paths of at most 160 characters");
                }
                if (!seen.add(p)) throw new IllegalArgumentException("duplicate field path");
            }
            fieldPaths = Collections.unmodifiableList(new ArrayList<>(fieldPaths));
        }
        if (reason != null) token(reason, "reason", 96);
        if (requiredAction != null) token(requiredAction, "requiredAction", 96);
        if (references != null) {
            if (references.isEmpty() || references.size() > 16) throw new IllegalArgumentException("references must hold 1-16 entries");
            Map<String, String> sorted = new TreeMap<>();
            for (Map.Entry<String, String> e : references.entrySet()) {
                token(e.getKey(), "reference key", 64);
                String v = e.getValue();
                if (v == null || v.isEmpty() || utf8Length(v) > 256 || !jsTrim(v).equals(v)
                        || hasControl(v)) {
                    throw new IllegalArgumentException("reference values must be non-empty safe strings of at most 256 encoded bytes");
                }
                sorted.put(e.getKey(), v);
            }
            references = Collections.unmodifiableMap(new LinkedHashMap<>(sorted));
        }
        if (fieldPaths == null && reason == null && requiredAction == null && references == null) {
            throw new IllegalArgumentException("rejection details need at least one supported member");
        }
        if (Json.write(tree(fieldPaths, reason, requiredAction, references)).getBytes(StandardCharsets.UTF_8).length
                > MAX_ENCODED_BYTES) {
            throw new IllegalArgumentException("rejection details exceed 4096 encoded bytes");
        }
    }

    private static void token(String v, String label, int max) {
        if (v == null || v.isEmpty() || v.length() > max || !TOKEN.matcher(v).matches()) {
            throw new IllegalArgumentException(label + " must be a lowercase stable token of at most " + max + " characters");
        }
    }

    /** UTF-8 length as JavaScript's TextEncoder counts it: a lone surrogate becomes U+FFFD, 3 bytes. */
    private static int utf8Length(String v) {
        int n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < v.length() && Character.isLowSurrogate(v.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static boolean hasControl(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
        }
        return false;
    }

    /** JavaScript {@code String.prototype.trim}: strips WhiteSpace and LineTerminator code points (ECMA-262). */
    private static String jsTrim(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && isJsSpace(s.charAt(b))) b++;
        while (e > b && isJsSpace(s.charAt(e - 1))) e--;
        return s.substring(b, e);
    }

    private static boolean isJsSpace(char c) {
        return c == '\t' || c == '\n' || c == 0x0b || c == '\f' || c == '\r' || c == ' ' || c == 0xa0 || c == 0x1680
                || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f
                || c == 0x3000 || c == 0xfeff;
    }

    /** Reads details from parsed JSON ({@link Json#parse}); unknown members or wrong types are refused. */
    @SuppressWarnings("unchecked")
    public static RejectionDetails fromJsonValue(Object value) {
        if (!(value instanceof Map<?, ?> m)) throw new IllegalArgumentException("rejection details must be an object");
        for (Object k : m.keySet()) {
            if (!"fieldPaths".equals(k) && !"reason".equals(k) && !"requiredAction".equals(k) && !"references".equals(k)) {
                throw new IllegalArgumentException("unknown rejection details member");
            }
        }
        List<String> paths = null;
        if (m.containsKey("fieldPaths")) {
            // JS treats an explicit null like a value: Array.isArray(null) is false → error (only undefined is absent)
            if (!(m.get("fieldPaths") instanceof List<?> l)) throw new IllegalArgumentException("fieldPaths must be an array");
            paths = new ArrayList<>();
            for (Object o : l) {
                if (!(o instanceof String s)) throw new IllegalArgumentException("fieldPaths entries must be strings");
                paths.add(s);
            }
        }
        String reason = optString(m, "reason");
        String action = optString(m, "requiredAction");
        Map<String, String> refs = null;
        if (m.containsKey("references")) {
            if (!(m.get("references") instanceof Map<?, ?> r)) throw new IllegalArgumentException("references must be an object");
            refs = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : r.entrySet()) {
                if (!(e.getValue() instanceof String s)) throw new IllegalArgumentException("reference values must be strings");
                refs.put((String) e.getKey(), s);
            }
        }
        return new RejectionDetails(paths, reason, action, refs);
    }

    private static String optString(Map<?, ?> m, String key) {
        if (!m.containsKey(key)) return null;
        if (!(m.get(key) instanceof String s)) throw new IllegalArgumentException(key + " must be a string");
        return s;
    }

    /** The normalized member tree, for §11 rendering. */
    public Map<String, Object> toJsonValue() { return tree(fieldPaths, reason, requiredAction, references); }

    private static Map<String, Object> tree(List<String> fieldPaths, String reason, String requiredAction,
            Map<String, String> references) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (fieldPaths != null) out.put("fieldPaths", fieldPaths);
        if (reason != null) out.put("reason", reason);
        if (requiredAction != null) out.put("requiredAction", requiredAction);
        if (references != null) out.put("references", references);
        return out;
    }

    /** The normalized JSON text, as it travels in {@code detailsJson}. */
    public String toJson() { return Json.write(toJsonValue()); }
}

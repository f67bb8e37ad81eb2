package syncular.jakarta.wire;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Canonical JSON for digests (SPEC §11.2) and the scope digest (§3.5): no whitespace, keys sorted by UTF-16 code
 * units ({@link String#compareTo}, as JavaScript's default sort), each value list deduplicated and sorted, strings
 * escaped exactly like JavaScript {@code JSON.stringify} (lowercase {@code \\u00xx}, non-ASCII literal — SPEC-DIGEST
 * §17). Used for the scope digest and the {@code X-Syncular-Scopes} header (§5.5).
 */
public final class CanonicalJson {
    private CanonicalJson() { }

    /** The canonical text of a scope map (variable → values). */
    public static String scopes(Map<String, ? extends Collection<String>> scopes) {
        List<String> keys = new ArrayList<>(scopes.keySet());
        keys.sort(null);
        StringBuilder sb = new StringBuilder(32 + keys.size() * 24).append('{');
        boolean firstKey = true;
        for (String k : keys) {
            if (!firstKey) sb.append(',');
            firstKey = false;
            Json.writeString(sb, k);
            sb.append(":[");
            boolean first = true;
            for (String v : new TreeSet<>(scopes.get(k))) {
                if (!first) sb.append(',');
                first = false;
                Json.writeString(sb, v);
            }
            sb.append(']');
        }
        return sb.append('}').toString();
    }

    /** §3.5: lowercase hex SHA-256 of the UTF-8 canonical JSON of the effective scope map. */
    public static String scopeDigest(Map<String, ? extends Collection<String>> scopes) {
        return sha256Hex(scopes(scopes).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Reads a scope map sent as JSON, e.g. the {@code X-Syncular-Scopes} header (§5.5): an object whose values are
     * arrays of strings (canonical form is not required, as in the reference server). Anything else is
     * {@code sync.invalid_request}. A repeated key keeps its last value, as {@code JSON.parse} does.
     */
    public static Map<String, List<String>> parseScopes(String json) {
        Object v;
        try {
            v = Json.parse(json);
        } catch (Json.JsonException e) {
            throw DecodeException.invalid("scope map is not JSON");
        }
        if (!(v instanceof Map<?, ?> m)) throw DecodeException.invalid("scope map must be a JSON object");
        Map<String, List<String>> out = new java.util.LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getValue() instanceof List<?> l)) throw DecodeException.invalid("scope map values must be string lists");
            List<String> values = new ArrayList<>(l.size());
            for (Object o : l) {
                if (!(o instanceof String s)) throw DecodeException.invalid("scope map values must be string lists");
                values.add(s);
            }
            out.put((String) e.getKey(), List.copyOf(values));
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    /** Lowercase hex SHA-256 (also the form of segment and blob ids after {@code "sha256:"}, §5.1). */
    public static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is mandatory in every JDK", e);
        }
    }
}

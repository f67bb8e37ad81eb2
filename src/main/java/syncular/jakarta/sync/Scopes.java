package syncular.jakarta.sync;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.ScopePattern;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.wire.ErrorCode;

/**
 * Scope semantics (SPEC §3): requested ∩ allowed (§3.2), stored-scope extraction (§3.1), write authorization
 * (§3.4). {@code allowed} is {@code null} when the host's resolver failed: reads revoke, writes are forbidden.
 */
public final class Scopes {
    /** The allowed-scope wildcard: any value (never valid in a request, §3.2). */
    public static final String ANY = "*";

    private Scopes() { }

    /**
     * Effective scopes of one subscription (§3.2 rules 3–4), or empty when revoked: a failed resolver, a requested
     * key the actor holds nothing for, an intersection left empty, or nothing requested at all. Keeps the requested
     * order, no de-duplication (REF).
     */
    public static Optional<Map<String, List<String>>> effective(Map<String, List<String>> requested,
                                                                Map<String, List<String>> allowed) {
        if (allowed == null) return Optional.empty();
        Map<String, List<String>> effective = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : requested.entrySet()) {
            List<String> allowedValues = allowed.get(e.getKey());
            if (allowedValues == null) return Optional.empty();
            List<String> values = allowedValues.contains(ANY) ? List.copyOf(e.getValue())
                    : e.getValue().stream().filter(allowedValues::contains).toList();
            if (values.isEmpty()) return Optional.empty();
            effective.put(e.getKey(), values);
        }
        return effective.isEmpty() ? Optional.empty() : Optional.of(effective);
    }

    /** §3.2 rule 2: every key the resolver returns must be declared by some table. */
    public static void checkResolvedKeys(Map<String, List<String>> allowed, CompiledSchema schema) {
        for (String key : allowed.keySet()) {
            if (!schema.variables().contains(key)) {
                throw new SyncException(ErrorCode.SYNC_INVALID_SUBSCRIPTION,
                        "the scope resolver returned a scope variable no table declares (§3.2)");
            }
        }
    }

    /**
     * A scope column's value as the stored scope string (JS {@code String(value)}), or empty when NULL, bytes or
     * the empty string (§3.1: a missing scope).
     */
    public static Optional<String> render(Object value) {
        if (value == null || value instanceof byte[]) return Optional.empty();
        String s;
        if (value instanceof Double d) {
            s = (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 1e21)
                    ? Long.toString(d.longValue()) : Double.toString(d);
        } else {
            s = value.toString();
        }
        return s.isEmpty() ? Optional.empty() : Optional.of(s);
    }

    /** The stored scopes of a decoded row (§3.1), or the first variable whose column is missing. */
    public static Extracted extract(TableSchema table, Object[] values) {
        Map<String, String> scopes = new TreeMap<>();
        for (ScopePattern p : table.scopes()) {
            Optional<String> v = render(values[table.columnIndex(p.column())]);
            if (v.isEmpty()) return new Extracted(Map.of(), p.variable());
            scopes.put(p.variable(), v.get());
        }
        return new Extracted(scopes, null);
    }

    /** Extraction result: {@code missing} is the variable that had no value, or null. */
    public record Extracted(Map<String, String> scopes, String missing) { }

    /**
     * §3.4: every declared variable must carry a non-empty stored value the actor is allowed (or {@code '*'}).
     * No partial pass.
     */
    public static boolean authorizeWrite(TableSchema table, Map<String, String> rowScopes,
                                         Map<String, List<String>> allowed) {
        if (allowed == null) return false;
        for (ScopePattern p : table.scopes()) {
            String value = rowScopes.get(p.variable());
            if (value == null || value.isEmpty()) return false;
            List<String> allowedValues = allowed.get(p.variable());
            if (allowedValues == null) return false;
            if (!allowedValues.contains(ANY) && !allowedValues.contains(value)) return false;
        }
        return true;
    }
}

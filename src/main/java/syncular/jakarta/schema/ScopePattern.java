package syncular.jakarta.schema;

/**
 * One scope pattern of a table (SPEC §3.1): {@code prefix:{variable}} bound to a column. The scope key of a row is
 * {@code prefix + ":" + value}; requested, allowed and stored scope maps are keyed by the variable.
 */
public record ScopePattern(String pattern, String prefix, String variable, String column) {
    /** The scope key for one value, e.g. {@code list:groceries}. */
    public String scopeKey(String value) { return prefix + ":" + value; }
}

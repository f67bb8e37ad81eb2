package syncular.jakarta.sync;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import syncular.jakarta.wire.Json;

/**
 * The bootstrap resume token (SPEC §4.7), opaque to clients:
 * {@code {"asOfCommitSeq":n,"tables":[…],"tableIndex":n,"rowCursor":s|null}}. One table per subscription (REF);
 * {@code rowCursor} is the last delivered row id (exclusive). A token that does not parse or names another table is
 * ignored: the bootstrap silently restarts (never an error).
 */
public record BootstrapToken(long asOfCommitSeq, List<String> tables, int tableIndex, String rowCursor) {
    public static Optional<BootstrapToken> parse(String json, String table) {
        if (json == null) return Optional.empty();
        try {
            if (!(Json.parse(json) instanceof Map<?, ?> m)) return Optional.empty();
            if (!(m.get("asOfCommitSeq") instanceof BigDecimal seq) || !(m.get("tables") instanceof List<?> tables)
                    || !(m.get("tableIndex") instanceof BigDecimal index)) {
                return Optional.empty();
            }
            Object cursor = m.get("rowCursor");
            if (cursor != null && !(cursor instanceof String)) return Optional.empty();
            if (tables.isEmpty() || !table.equals(tables.get(0))) return Optional.empty();
            if (tables.stream().anyMatch(t -> !(t instanceof String))) return Optional.empty();
            return Optional.of(new BootstrapToken(seq.longValueExact(), tables.stream().map(String.class::cast).toList(),
                    index.intValueExact(), (String) cursor));
        } catch (Json.JsonException | ArithmeticException e) {
            return Optional.empty();
        }
    }

    public static BootstrapToken of(long asOfCommitSeq, String table, String rowCursor) {
        return new BootstrapToken(asOfCommitSeq, List.of(table), 0, rowCursor);
    }

    /** The token text, in the key order of the reference's JSON.stringify. */
    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("asOfCommitSeq", asOfCommitSeq);
        m.put("tables", tables);
        m.put("tableIndex", tableIndex);
        m.put("rowCursor", rowCursor);
        return Json.write(m);
    }
}

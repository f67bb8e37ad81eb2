package syncular.jakarta.sync;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.RejectionDetails;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.Subscription;
import syncular.jakarta.wire.TypeTag;

/**
 * What the database can store, checked before it is asked to (issue 13 item 3). The wire admits values PostgreSQL
 * refuses: U+0000 in text (SQLSTATE 22021), keys longer than a btree entry (54000), JSON deeper or with numbers
 * wider than {@code jsonb} holds (54001, 22003). Left to the database, each became a 500 on every retry and wedged
 * the client's outbox.
 *
 * <p>Request-level fields (clientId, clientCommitId — the idempotency key, so a commit whose id cannot be stored
 * cannot be rejected durably either —, subscription ids, scope keys and values, the bootstrap token) answer 400
 * {@code sync.invalid_request} naming the field. Operation-level values (rowId, scope values taken from the payload,
 * JSON columns) reject their commit with a stored, replayable {@code sync.invalid_request} carrying
 * {@code PUSH_RESULT_DETAILS} (field path + reason), and the batch goes on. Whatever these rules miss, the database's
 * own refusal ({@link StorageErrorCode#DATA_REJECTED}) takes the same two paths.
 */
public final class StorableInput {
    /**
     * Largest identifier, in UTF-8 bytes: rowId, clientId, clientCommitId, subscription id, scope key and value.
     * A btree entry holds at most ~2,700 bytes (a third of an 8 KiB page) for the whole key, and the widest keys
     * hold two such values (sync_row_scopes: partition, table, variable, value, row id), so each stays well below
     * half of it. Fixed rather than configurable: raising it past the physical limit cannot work.
     */
    public static final int MAX_KEY_BYTES = 512;
    /** Deepest JSON column value: our own parser's limit, far below where {@code jsonb}'s recursion gives up. */
    public static final int MAX_JSON_DEPTH = Json.MAX_DEPTH;
    /** {@code numeric} (what {@code jsonb} stores numbers as): digits before the point, and after it. */
    static final long MAX_NUMERIC_WEIGHT_DIGITS = 131_072;
    static final long MAX_NUMERIC_SCALE_DIGITS = 16_383;

    /** Stable {@code reason} tokens of the rejection details. */
    static final String NUL = "nul_character";
    static final String TOO_LONG = "value_too_long";
    static final String JSON_TOO_DEEP = "json_too_deep";
    static final String JSON_NUMBER = "json_number_out_of_range";
    static final String REFUSED = "database_refused_value";

    private StorableInput() { }

    // ------------------------------------------------------------------ request level

    /**
     * Throws 400 {@code sync.invalid_request} naming the first request-level field the database cannot store
     * (details {@code {"field":…,"reason":…}}).
     */
    static void checkRequest(RequestMessage request) {
        key(request.header().clientId(), "clientId");
        for (PushCommit commit : request.pushCommits()) key(commit.clientCommitId(), "clientCommitId");
        for (Subscription s : request.subscriptions()) {
            key(s.id(), "subscription.id");
            key(s.table(), "subscription.table");
            for (Map.Entry<String, List<String>> e : s.scopes().entrySet()) {
                key(e.getKey(), "subscription.scopes");
                for (String v : e.getValue()) key(v, "subscription.scopes");
            }
            // the token is opaque, but its row cursor is bound into a query: a NUL there is refused by the database
            if (s.bootstrapStateJson() != null && containsNul(parsedOrNull(s.bootstrapStateJson()))) {
                throw invalid("subscription.bootstrapState", NUL);
            }
        }
    }

    /** The socket's clientId ({@code GET /realtime?clientId=}), checked as the request header's is. */
    public static void checkClientId(String clientId) { key(clientId, "clientId"); }

    private static void key(String value, String field) {
        String reason = keyProblem(value);
        if (reason != null) throw invalid(field, reason);
    }

    private static SyncException invalid(String field, String reason) {
        String what = reason.equals(NUL) ? "contains U+0000" : "is longer than " + MAX_KEY_BYTES + " UTF-8 bytes";
        return new SyncException(ErrorCode.SYNC_INVALID_REQUEST, field + " " + what + ", which the server cannot store",
                Json.write(new TreeMap<>(Map.of("field", field, "reason", reason))));   // a stable key order
    }

    /** Null when {@code value} can be stored as a key; else the reason token. */
    static String keyProblem(String value) {
        if (value == null) return null;
        if (value.indexOf('\0') >= 0) return NUL;
        // a UTF-8 byte count above the cap needs at least cap/3 chars: skip the count for short strings
        if (value.length() > MAX_KEY_BYTES / 3 && value.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            return TOO_LONG;
        }
        return null;
    }

    // ------------------------------------------------------------------ operation level

    /** The rejection of operation {@code opIndex} for a rowId the database cannot store, or null. */
    static OperationResult rowId(int opIndex, String rowId) {
        String reason = keyProblem(rowId);
        return reason == null ? null : rejection(opIndex, "rowId", reason);
    }

    /** The rejection for a scope value (taken from the payload) the database cannot store, or null. */
    static OperationResult scopes(int opIndex, TableSchema table, Map<String, String> scopes) {
        for (var p : table.scopes()) {
            String reason = keyProblem(scopes.get(p.variable()));
            if (reason != null) return rejection(opIndex, p.column(), reason);
        }
        return null;
    }

    /** The rejection for a JSON column value {@code jsonb} cannot hold, or null. */
    static OperationResult jsonColumns(int opIndex, TableSchema table, Object[] values) {
        List<ColumnSchema> columns = table.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).type() != TypeTag.JSON || !(values[c] instanceof String raw)) continue;
            String reason = jsonProblem(raw);
            if (reason != null) return rejection(opIndex, columns.get(c).name(), reason);
        }
        return null;
    }

    /** The stored rejection for a write the database itself refused (class 22/54): the safety net. */
    static OperationResult refused(int opIndex) {
        return new OperationResult.Failed(opIndex, ErrorCode.SYNC_INVALID_REQUEST.wire(),
                "the database refused a value of this operation", false,
                new RejectionDetails(null, REFUSED, null, null).toJson());
    }

    private static OperationResult rejection(int opIndex, String field, String reason) {
        String message = switch (reason) {
            case NUL -> "a key value contains U+0000, which the server cannot store";
            case TOO_LONG -> "a key value is longer than " + MAX_KEY_BYTES + " UTF-8 bytes";
            case JSON_TOO_DEEP -> "a json value is nested deeper than " + MAX_JSON_DEPTH + " levels";
            default -> "a json value has a number outside the range the server can store";
        };
        // a column name that is no identifier cannot be a §6.3.1 field path; the reason alone still explains it
        List<String> paths = field.length() <= 160 && field.matches("[A-Za-z_][A-Za-z0-9_]*") ? List.of(field) : null;
        return new OperationResult.Failed(opIndex, ErrorCode.SYNC_INVALID_REQUEST.wire(), message, false,
                new RejectionDetails(paths, reason, null, null).toJson());
    }

    /**
     * Depth and number range of an already valid JSON text, in one pass. A number's {@code numeric} form needs
     * {@code intDigits + exponent} digits before the point and {@code fracDigits - exponent} after it.
     */
    static String jsonProblem(String json) {
        int depth = 0;
        int n = json.length();
        for (int i = 0; i < n; i++) {
            char c = json.charAt(i);
            if (c == '"') {
                for (i++; i < n && json.charAt(i) != '"'; i++) {
                    if (json.charAt(i) == '\\') i++;
                }
            } else if (c == '[' || c == '{') {
                if (++depth > MAX_JSON_DEPTH) return JSON_TOO_DEEP;
            } else if (c == ']' || c == '}') {
                depth--;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int start = i;
                while (i + 1 < n && "+-.eE0123456789".indexOf(json.charAt(i + 1)) >= 0) i++;
                if (!numericFits(json.substring(start, i + 1))) return JSON_NUMBER;
            }
        }
        return null;
    }

    private static boolean numericFits(String lexeme) {
        int e = Math.max(lexeme.indexOf('e'), lexeme.indexOf('E'));
        String mantissa = e < 0 ? lexeme : lexeme.substring(0, e);
        long exponent = 0;
        if (e >= 0) {
            String exp = lexeme.substring(e + 1);
            boolean negative = exp.startsWith("-");
            String digits = exp.replaceFirst("^[+-]", "").replaceFirst("^0+(?=.)", "");
            // numeric's input refuses any exponent of INT_MAX/2 or more, even on a zero
            if (digits.length() > 10) return false;
            exponent = negative ? -Long.parseLong(digits) : Long.parseLong(digits);
            if (Math.abs(exponent) >= Integer.MAX_VALUE / 2) return false;
        }
        int dot = mantissa.indexOf('.');
        long fracDigits = dot < 0 ? 0 : mantissa.length() - dot - 1;
        if (Math.max(0, fracDigits - exponent) > MAX_NUMERIC_SCALE_DIGITS) return false;
        if (mantissaIsZero(mantissa)) return true;
        String whole = (dot < 0 ? mantissa : mantissa.substring(0, dot)).replace("-", "").replaceFirst("^0+", "");
        return whole.length() + exponent <= MAX_NUMERIC_WEIGHT_DIGITS;
    }

    private static boolean mantissaIsZero(String mantissa) {
        for (int i = 0; i < mantissa.length(); i++) {
            char c = mantissa.charAt(i);
            if (c >= '1' && c <= '9') return false;
        }
        return true;
    }

    // ------------------------------------------------------------------ the database's own refusal

    /**
     * Runs a request; a {@link StorageErrorCode#DATA_REJECTED} that escaped the per-commit path (a request-level
     * read or write these rules missed) answers 400 {@code sync.invalid_request}, never a retryable 500: the same
     * request would be refused again.
     */
    static <T> T refusalsAsInvalidRequest(Supplier<T> request) {
        try {
            return request.get();
        } catch (StorageException e) {
            if (e.code() != StorageErrorCode.DATA_REJECTED) throw e;
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST,
                    "the database refused a value of the request, which the server cannot store",
                    Json.write(Map.of("reason", REFUSED)));
        }
    }

    private static Object parsedOrNull(String json) {
        try {
            return Json.parse(json);
        } catch (Json.JsonException e) {
            return null;
        }
    }

    private static boolean containsNul(Object v) {
        if (v instanceof String s) return s.indexOf('\0') >= 0;
        if (v instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (containsNul(e.getKey()) || containsNul(e.getValue())) return true;
            }
        } else if (v instanceof List<?> l) {
            for (Object o : l) {
                if (containsNul(o)) return true;
            }
        }
        return false;
    }
}

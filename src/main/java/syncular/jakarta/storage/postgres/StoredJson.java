package syncular.jakarta.storage.postgres;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import syncular.jakarta.storage.ClientSubscription;
import syncular.jakarta.storage.OperationResult;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredPushResult;
import syncular.jakarta.wire.Json;

/**
 * The JSON the storage keeps in JSONB columns: scope maps, client subscriptions and push results (upstream
 * {@code serializePushResult}: {@code serverRow} as base64, since JSONB holds no bytes). JSONB reorders object keys,
 * so anything that must come back byte-exact (the PUSH_RESULT_DETAILS object, SPEC §6.3.1) is stored as a JSON
 * string, {@code detailsJson}, never as a nested object.
 */
final class StoredJson {
    private StoredJson() { }

    static String scopes(Map<String, String> scopes) { return Json.write(new TreeMap<>(scopes)); }

    static Map<String, String> parseScopes(String json) {
        Map<String, String> out = new TreeMap<>();
        ((Map<?, ?>) Json.parse(json)).forEach((k, v) -> out.put((String) k, (String) v));
        return out;
    }

    static String subscriptions(List<ClientSubscription> subs) {
        List<Object> out = new ArrayList<>();
        for (ClientSubscription s : subs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id());
            m.put("table", s.table());
            m.put("scopes", s.scopes());
            out.add(m);
        }
        return Json.write(out);
    }

    static List<ClientSubscription> parseSubscriptions(String json) {
        List<ClientSubscription> out = new ArrayList<>();
        for (Object o : (List<?>) Json.parse(json)) {
            Map<?, ?> m = (Map<?, ?>) o;
            Map<String, List<String>> scopes = new TreeMap<>();
            ((Map<?, ?>) m.get("scopes")).forEach((k, v) -> {
                List<String> values = new ArrayList<>();
                for (Object x : (List<?>) v) values.add((String) x);
                scopes.put((String) k, values);
            });
            out.add(new ClientSubscription((String) m.get("id"), (String) m.get("table"), scopes));
        }
        return out;
    }

    static String pushResult(StoredPushResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", r.status() == StoredPushResult.Status.APPLIED ? "applied" : "rejected");
        if (r.commitSeq() != null) m.put("commitSeq", r.commitSeq());
        if (r.recordedAtMs() != null) m.put("recordedAtMs", r.recordedAtMs());
        if (r.cacheIdentity() != null) m.put("cacheIdentity", r.cacheIdentity());
        List<Object> results = new ArrayList<>();
        for (OperationResult op : r.results()) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("opIndex", op.opIndex());
            if (op instanceof OperationResult.Conflict c) {
                o.put("status", "conflict");
                o.put("code", c.code());
                o.put("message", c.message());
                o.put("serverVersion", c.serverVersion());
                o.put("serverRow", Base64.getEncoder().encodeToString(c.serverRow()));
                if (c.conflictColumns() != null) {
                    o.put("conflictColumns", Base64.getEncoder().encodeToString(c.conflictColumns()));
                }
            } else if (op instanceof OperationResult.Failed f) {
                o.put("status", "error");
                o.put("code", f.code());
                o.put("message", f.message());
                o.put("retryable", f.retryable());
                if (f.detailsJson() != null) o.put("detailsJson", f.detailsJson());
            } else {
                o.put("status", "applied");
            }
            results.add(o);
        }
        m.put("results", results);
        return Json.write(m);
    }

    /** Any shape or syntax problem is the §6.3 "unreadable stored result": a retryable cache miss. */
    static StoredPushResult parsePushResult(String json) {
        try {
            Map<?, ?> m = (Map<?, ?>) Json.parse(json);
            String status = (String) m.get("status");
            StoredPushResult.Status st = switch (status) {
                case "applied" -> StoredPushResult.Status.APPLIED;
                case "rejected" -> StoredPushResult.Status.REJECTED;
                default -> throw new IllegalArgumentException("status");
            };
            List<OperationResult> results = new ArrayList<>();
            for (Object o : (List<?>) m.get("results")) {
                Map<?, ?> r = (Map<?, ?>) o;
                int opIndex = ((BigDecimal) r.get("opIndex")).intValueExact();
                switch ((String) r.get("status")) {
                    case "applied" -> results.add(new OperationResult.Applied(opIndex));
                    case "conflict" -> {
                        // a bitmap since wire 3; absent in results stored before
                        byte[] cols = r.get("conflictColumns") instanceof String b64
                                ? Base64.getDecoder().decode(b64) : null;
                        results.add(new OperationResult.Conflict(opIndex, (String) r.get("code"),
                                (String) r.get("message"), ((BigDecimal) r.get("serverVersion")).longValueExact(),
                                Base64.getDecoder().decode((String) r.get("serverRow")), cols));
                    }
                    case "error" -> results.add(new OperationResult.Failed(opIndex, (String) r.get("code"),
                            (String) r.get("message"), (Boolean) r.get("retryable"), (String) r.get("detailsJson")));
                    default -> throw new IllegalArgumentException("op status");
                }
            }
            return new StoredPushResult(st, optLong(m.get("commitSeq")), optLong(m.get("recordedAtMs")),
                    (String) m.get("cacheIdentity"), results);
        } catch (RuntimeException e) {
            throw new StorageException(StorageErrorCode.IDEMPOTENCY_CACHE_MISS, e);
        }
    }

    private static Long optLong(Object o) { return o == null ? null : ((BigDecimal) o).longValueExact(); }
}

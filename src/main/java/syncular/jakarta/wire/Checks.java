package syncular.jakarta.wire;

import java.util.List;
import java.util.Map;

/** Constructor checks shared by the frame records: misuse is {@link IllegalArgumentException}. */
final class Checks {
    private Checks() { }

    static String nonNull(String s, String field) {
        if (s == null) throw new IllegalArgumentException(field + " is required");
        return s;
    }

    static String nonEmpty(String s, String field) {
        if (s == null || s.isEmpty()) throw new IllegalArgumentException(field + " must be non-empty");
        return s;
    }

    static long safe(long v, String field) {
        if (v > WireReader.MAX_SAFE || v < -WireReader.MAX_SAFE) {
            throw new IllegalArgumentException(field + " outside ±(2^53−1)");
        }
        return v;
    }

    static Long safe(Long v, String field) {
        if (v != null) safe(v.longValue(), field);
        return v;
    }

    static String json(String s, String field) {
        if (s != null && !Json.isValid(s)) throw new IllegalArgumentException(field + " is not a JSON document");
        return s;
    }

    static <T> List<T> list(List<T> l, String field) {
        if (l == null) throw new IllegalArgumentException(field + " is required");
        for (T t : l) if (t == null) throw new IllegalArgumentException(field + " has a null element");
        return List.copyOf(l); // no copy when l is already an immutable list (the decoders build those)
    }

    static Map<String, List<String>> scopeLists(Map<String, ? extends List<String>> m, String field) {
        if (m == null) throw new IllegalArgumentException(field + " is required");
        if (m instanceof CanonicalMap) {
            @SuppressWarnings("unchecked")
            Map<String, List<String>> c = (Map<String, List<String>>) m;
            return c; // built by a decoder or by this method: immutable, canonical, values immutable
        }
        // canonical order (SPEC Conventions map): ascending UTF-16 code units, as the wire carries it
        Map<String, List<String>> checked = new java.util.HashMap<>();
        for (Map.Entry<String, ? extends List<String>> e : m.entrySet()) {
            checked.put(nonNull(e.getKey(), field + " key"), list(e.getValue(), field + " values"));
        }
        return CanonicalMap.copyOf(checked);
    }

    static Map<String, String> stringMap(Map<String, String> m, String field) {
        if (m == null) throw new IllegalArgumentException(field + " is required");
        if (m instanceof CanonicalMap) return m;
        for (Map.Entry<String, String> e : m.entrySet()) {
            nonNull(e.getKey(), field + " key");
            nonNull(e.getValue(), field + " value");
        }
        return CanonicalMap.copyOf(m);
    }
}

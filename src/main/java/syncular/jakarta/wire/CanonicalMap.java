package syncular.jakarta.wire;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An immutable map whose keys are unique and strictly ascending by UTF-16 code units — the canonical order of a wire
 * {@code map} (SPEC Conventions) — stored as two arrays. The decoders build these directly from checked input, and
 * the frame records keep them without copying: a pull response carries one per change.
 */
final class CanonicalMap<V> extends AbstractMap<String, V> {
    private static final CanonicalMap<?> EMPTY = new CanonicalMap<>(new String[0], new Object[0]);

    private final String[] keys;
    private final Object[] values;

    /** Trusted: {@code keys} already strictly ascending, nothing null, arrays owned by the new map. */
    CanonicalMap(String[] keys, Object[] values) {
        this.keys = keys;
        this.values = values;
    }

    @SuppressWarnings("unchecked")
    static <V> CanonicalMap<V> empty() { return (CanonicalMap<V>) EMPTY; }

    /** A canonical copy of any map (null keys or values refused by the caller beforehand). */
    static <V> CanonicalMap<V> copyOf(Map<String, ? extends V> m) {
        if (m instanceof CanonicalMap) {
            @SuppressWarnings("unchecked")
            CanonicalMap<V> c = (CanonicalMap<V>) m;
            return c;
        }
        if (m.isEmpty()) return empty();
        String[] k = new String[m.size()];
        Object[] v = new Object[k.length];
        int i = 0;
        for (String key : m.keySet()) k[i++] = key;
        Arrays.sort(k); // String.compareTo: UTF-16 code units
        for (i = 0; i < k.length; i++) v[i] = m.get(k[i]);
        return new CanonicalMap<>(k, v);
    }

    @Override public int size() { return keys.length; }

    @Override public boolean containsKey(Object key) { return key instanceof String s && Arrays.binarySearch(keys, s) >= 0; }

    @SuppressWarnings("unchecked")
    @Override public V get(Object key) {
        if (!(key instanceof String s)) return null;
        int i = Arrays.binarySearch(keys, s);
        return i >= 0 ? (V) values[i] : null;
    }

    @Override public Set<Entry<String, V>> entrySet() {
        return new AbstractSet<>() {
            @Override public int size() { return keys.length; }

            @Override public Iterator<Entry<String, V>> iterator() {
                return new Iterator<>() {
                    private int i;

                    @Override public boolean hasNext() { return i < keys.length; }

                    @SuppressWarnings("unchecked")
                    @Override public Entry<String, V> next() {
                        if (i >= keys.length) throw new NoSuchElementException();
                        Entry<String, V> e = new SimpleImmutableEntry<>(keys[i], (V) values[i]);
                        i++;
                        return e;
                    }
                };
            }
        };
    }
}

package syncular.jakarta.storage;

import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.function.ToLongFunction;

/**
 * Recently built, stored or read segments, least recently used first, within a byte budget: a segment store's memory
 * of bytes by content address in front of its database or bucket ({@link #byContentAddress}), or the sync layer's
 * memory of pages by the context they were built in. Either key names content that never changes, so an entry is
 * never stale; it only has to go when what it names is deleted. A segment larger than a quarter of the budget is
 * never kept, so one large image cannot evict everything else. Thread-safe.
 *
 * @param <K> what names a segment
 * @param <V> what is kept of it; {@code size} tells its bytes
 */
public final class SegmentBytesCache<K, V> {
    private final LinkedHashMap<K, V> recent = new LinkedHashMap<>(16, 0.75f, true);
    private final long budgetBytes;
    private final ToLongFunction<V> size;
    private long cachedBytes;

    /** {@code budgetBytes}: 0 keeps nothing. */
    public SegmentBytesCache(long budgetBytes, ToLongFunction<V> size) {
        this.budgetBytes = budgetBytes;
        this.size = size;
    }

    /** Segment bytes by their content address (§5.1). */
    public static SegmentBytesCache<String, byte[]> byContentAddress(long budgetBytes) {
        return new SegmentBytesCache<>(budgetBytes, bytes -> bytes.length);
    }

    /** The kept value; arrays in it are shared and must not be modified. */
    public synchronized Optional<V> get(K key) { return Optional.ofNullable(recent.get(key)); }

    public synchronized void remember(K key, V value) {
        long bytes = size.applyAsLong(value);
        if (bytes > budgetBytes / 4 || recent.containsKey(key)) return;
        recent.put(key, value);
        cachedBytes += bytes;
        for (var it = recent.entrySet().iterator(); cachedBytes > budgetBytes && it.hasNext(); ) {
            cachedBytes -= size.applyAsLong(it.next().getValue());
            it.remove();
        }
    }

    /** After a sweep deleted segments: no memory of what the store no longer holds. */
    public synchronized void forgetAll() {
        recent.clear();
        cachedBytes = 0;
    }
}

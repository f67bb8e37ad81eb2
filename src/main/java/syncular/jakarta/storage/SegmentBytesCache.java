package syncular.jakarta.storage;

import java.util.LinkedHashMap;
import java.util.Optional;

/**
 * Recently stored or read segment bytes by content address, least recently used first, within a byte budget: a
 * segment store's memory in front of its database or bucket. Content-addressed bytes never change, so an entry is
 * never stale; it only has to go when the store deletes the segment. A segment larger than a quarter of the budget
 * is never kept, so one large image cannot evict everything else. Thread-safe.
 */
public final class SegmentBytesCache {
    private final LinkedHashMap<String, byte[]> recent = new LinkedHashMap<>(16, 0.75f, true);
    private final long budgetBytes;
    private long cachedBytes;

    /** {@code budgetBytes}: 0 keeps nothing. */
    public SegmentBytesCache(long budgetBytes) { this.budgetBytes = budgetBytes; }

    /** The kept bytes; the array is shared and must not be modified. */
    public synchronized Optional<byte[]> get(String segmentId) { return Optional.ofNullable(recent.get(segmentId)); }

    public synchronized void remember(String segmentId, byte[] bytes) {
        if (bytes.length > budgetBytes / 4 || recent.containsKey(segmentId)) return;
        recent.put(segmentId, bytes);
        cachedBytes += bytes.length;
        for (var it = recent.entrySet().iterator(); cachedBytes > budgetBytes && it.hasNext(); ) {
            cachedBytes -= it.next().getValue().length;
            it.remove();
        }
    }

    /** After a sweep deleted segments: no memory of bytes the store no longer holds. */
    public synchronized void forgetAll() {
        recent.clear();
        cachedBytes = 0;
    }
}

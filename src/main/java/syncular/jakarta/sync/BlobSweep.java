package syncular.jakarta.sync;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import syncular.jakarta.storage.BlobStore;
import syncular.jakarta.storage.ServerStorage;

/**
 * The orphan sweep (SPEC §5.9.2; REF blob-store.ts {@code sweepOrphanBlobs}): a blob last uploaded longer than the
 * grace period ago that no row references (§5.9.4) is deleted. The grace is the whole protection of a fresh upload
 * whose push has not landed yet, so it must far exceed any upload-to-push delay (default 24 h). Pages through the
 * store's old blobs, asks the reference index about each page per partition in one look-up, and deletes the rest
 * only if still old (a re-upload since renews it). Also removes uploads that never completed. Idempotent: nodes that
 * sweep at once at worst repeat look-ups.
 */
public final class BlobSweep {
    static final int PAGE = 500;

    private BlobSweep() { }

    /** What one sweep did. */
    public record Result(int deleted, int kept, int incompleteUploads) { }

    public static Result sweep(BlobStore store, ServerStorage storage, long nowMs, long graceMs) {
        long cutoff = nowMs - graceMs;
        int deleted = 0;
        int kept = 0;
        BlobStore.BlobInfo after = null;
        while (true) {
            List<BlobStore.BlobInfo> page = store.uploadedBefore(cutoff, after, PAGE);
            Map<String, List<String>> byPartition = new LinkedHashMap<>();
            for (BlobStore.BlobInfo b : page) {
                byPartition.computeIfAbsent(b.partition(), p -> new ArrayList<>()).add(b.blobId());
            }
            for (Map.Entry<String, List<String>> e : byPartition.entrySet()) {
                Set<String> referenced = storage.referencedBlobIds(e.getKey(), e.getValue());
                for (String blobId : e.getValue()) {
                    if (referenced.contains(blobId)) {
                        kept++;
                    } else if (store.delete(e.getKey(), blobId, cutoff)) {
                        deleted++;
                    }
                }
            }
            if (page.size() < PAGE) break;
            after = page.get(page.size() - 1);
        }
        return new Result(deleted, kept, store.purgeIncompleteUploads(cutoff));
    }
}

package syncular.jakarta.storage.postgres;

import java.nio.charset.StandardCharsets;

/**
 * Transaction-scoped advisory locks (STYLE §6.6). Only {@code pg_try_advisory_xact_lock}: PostgreSQL frees it at
 * commit or rollback, while a session lock would survive a pooled connection's {@code close()}. Migrations take
 * none (they serialize on {@code LOCK TABLE sync_partitions}).
 */
final class AdvisoryLocks {
    private AdvisoryLocks() { }

    /** Advisory-lock purposes, used as the first int4 of a two-key lock. */
    enum LockPurpose {
        BACKFILL_BATCH(0x5359_4E43);   // 'S' 'Y' 'N' 'C'

        final int value;

        LockPurpose(int value) { this.value = value; }
    }

    /** Params: purpose, key. */
    static final String TRY_XACT_LOCK = "SELECT pg_try_advisory_xact_lock(?, ?)";

    /**
     * The second key of a checkpoint's lock: FNV-1a over the UTF-8 of partition, NUL, name. A collision only makes
     * two checkpoints' batches wait on each other.
     */
    static int key(String partition, String name) {
        int h = 0x811C9DC5;
        for (byte b : (partition + '\0' + name).getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xFF;
            h *= 0x01000193;
        }
        return h;
    }
}

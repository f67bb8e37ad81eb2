package syncular.jakarta.storage;

/**
 * The stable codes of {@link StorageException}. The {@code sync.storage.*} codes and their messages are upstream's
 * ({@code storage-errors.js}, seeds/000, plus the layout codes of the later line); messages never carry identifiers,
 * values or SQL: what a caller needs travels in {@link StorageException#details()}. The infrastructure codes at the
 * end classify driver failures ({@code PgErrors}, STYLE §6.5); they have no upstream spelling.
 */
public enum StorageErrorCode {
    SCHEMA_MIGRATION_PENDING("sync.storage.schema_migration_pending", "schema migration requires another invocation"),
    SCHEMA_MIGRATION_CONFLICT("sync.storage.schema_migration_conflict",
            "another schema migration target is already pending"),
    SCHEMA_CHANGED("sync.storage.schema_changed", "storage schema is not ready for this operation"),
    INVALID_MIGRATION_BUDGET("sync.storage.invalid_migration_budget",
            "migration statement budget must be an integer from 10 through 1000"),
    SCAN_REQUIRES_SCOPE("sync.storage.scan_requires_scope",
            "scope-indexed row scans require at least one scope variable"),
    INDEX_NOT_FOUND("sync.storage.index_not_found", "trusted row lookup requires a declared relational index"),
    INDEX_NOT_MATERIALIZED("sync.storage.index_not_materialized",
            "trusted row lookup requires a materialized relational table"),
    INDEX_VALUE_COUNT_MISMATCH("sync.storage.index_value_count_mismatch",
            "trusted row lookup requires one exact value per index column"),
    INVALID_LIMIT("sync.storage.invalid_limit", "trusted row lookup limit must be an integer from 1 through 1,000"),
    PRUNE_EPOCH_MISMATCH("sync.storage.prune_epoch_mismatch",
            "partition log epoch changed; recompute retention inputs"),
    PARTITION_UNREGISTERED("sync.storage.partition_unregistered", "pruning requires a registered partition"),
    INVALID_PRUNE_CURSOR("sync.storage.invalid_prune_cursor",
            "pruning requires a non-negative safe integer cursor and a non-empty log epoch"),
    CHECKPOINT_NOT_DECLARED("sync.storage.checkpoint_not_declared",
            "checkpoint claim requires a declared, not yet activated row"),
    CHECKPOINT_UNSUPPORTED("sync.storage.checkpoint_unsupported",
            "this storage backend cannot declare backfill checkpoints"),
    CHECKPOINT_FENCE_MISSING("sync.storage.checkpoint_fence_missing",
            "checkpoint activation requires the writer fence raised at declaration"),
    CHECKPOINT_INCOMPLETE("sync.storage.checkpoint_incomplete",
            "a declared backfill checkpoint is not activated and this caller did not declare it"),
    STORED_LAYOUT_MISMATCH("sync.storage.stored_layout_mismatch",
            "stored schema layouts disagree with the configured schema at the same version"),
    PHYSICAL_LAYOUT_MISMATCH("sync.storage.physical_layout_mismatch",
            "a synced table does not match the storage layout the running code reads and writes"),
    /** The {@code sync_commits} trigger refused an append: the partition is fenced above this writer (RFC 0007). */
    WRITER_FENCE_REJECTED("sync.storage.writer_fence_rejected",
            "the partition is fenced at a newer writer version than this commit carries"),
    /** Ours: the database was migrated by a newer build; an older build must not run against it. */
    STORED_SCHEMA_NEWER("sync.storage.stored_schema_newer",
            "the stored schema version is newer than the running schema; refusing to run an older server"),
    /** Ours: a version bump that is not append-only (reordered, dropped, retyped, re-nulled column, new key). */
    MIGRATION_REFUSED("sync.storage.migration_refused",
            "the schema change is not an append-only migration; only new tables, retired tables and nullable "
                    + "columns appended at the end are supported"),
    /** The wire catalog's code (SPEC §2.3, §6.3): a stored push result cannot be read back. */
    IDEMPOTENCY_CACHE_MISS("sync.idempotency_cache_miss", "persisted push result unreadable"),
    /** A row write violated a relational constraint; {@link StorageException#opIndex()} names the operation. */
    CONSTRAINT_VIOLATION("sync.storage.constraint_violation", "application row violates a relational constraint"),
    /**
     * SQLSTATE class 22 (data exception: U+0000 in text, a number {@code numeric} cannot hold, …) or 54 (program
     * limit: a key wider than a btree entry, JSON nested past the stack): the database refuses the VALUES, so the
     * same write fails again on every retry. {@link StorageException#opIndex()} names the push operation.
     */
    DATA_REJECTED("sync.storage.data_rejected", "the database refused a value of the write"),
    /** Serialization failure or deadlock (SQLSTATE 40001, 40P01): the whole transaction may be retried. */
    RETRY_TRANSACTION("sync.storage.retry_transaction", "the transaction was aborted by a concurrent one; retry it"),
    /** SQLSTATE 55P03: a NOWAIT or lock timeout gave up. */
    LOCK_NOT_AVAILABLE("sync.storage.lock_not_available", "a database lock was not available in time"),
    /**
     * SQLSTATE class 08, or 57P01–57P03 (the server ended the session): the connection broke; the outcome of an
     * in-flight commit is unknown.
     */
    CONNECTION_LOST("sync.storage.connection_lost", "the database connection was lost"),
    /** Anything else from the driver; the cause is attached for the log, never rendered. */
    UNCLASSIFIED("sync.storage.unclassified", "the database reported an unexpected failure");

    private final String code;
    private final String message;

    StorageErrorCode(String code, String message) {
        this.code = code;
        this.message = message;
    }

    /** The stable code callers branch on. */
    public String code() { return code; }

    /** The fixed, privacy-safe message. */
    public String message() { return message; }

    /** True for failures a caller may retry as a whole transaction. */
    public boolean retryable() {
        return this == RETRY_TRANSACTION || this == LOCK_NOT_AVAILABLE || this == CONNECTION_LOST
                || this == IDEMPOTENCY_CACHE_MISS;
    }
}

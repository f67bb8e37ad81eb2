package syncular.jakarta.wire;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The closed error catalog (SPEC §10.2): category, retryability, recommended action and HTTP status are fixed per
 * code. Adds {@code sync.schema_not_ready} (seeds/002 {@code errors.js}) and {@code sync.internal_error} (the later
 * catalog's code for an unexpected server failure), and the two push-record codes of the wire-3 catalog
 * (SPEC @008c36d5 §10.2): {@code sync.row_deleted} and {@code sync.reference_violation}. It keeps
 * {@code sync.client_wire_unsupported}, which that catalog drops with wire 1; this codec still speaks wire 1.
 */
public enum ErrorCode {
    OPERATION_UNKNOWN("operation.unknown", Category.NOT_FOUND, false, Action.REGENERATE_CLIENT, 404),
    OPERATION_FORBIDDEN("operation.forbidden", Category.FORBIDDEN, false, Action.CHECK_PERMISSIONS, 403),
    OPERATION_INVALID_REQUEST("operation.invalid_request", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    OPERATION_RESULT_TOO_LARGE("operation.result_too_large", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    OPERATION_STORAGE_UNSUPPORTED("operation.storage_unsupported", Category.INTERNAL, false, Action.INSPECT_SERVER, 500),
    OPERATION_QUERY_FAILED("operation.query_failed", Category.INTERNAL, false, Action.INSPECT_SERVER, 500),
    OPERATION_EXECUTION_FAILED("operation.execution_failed", Category.INTERNAL, false, Action.INSPECT_SERVER, 500),
    SYNC_AUTH_REQUIRED("sync.auth_required", Category.AUTH_REQUIRED, true, Action.REFRESH_AUTH, 401),
    SYNC_AUTH_LEASE_REQUIRED("sync.auth_lease_required", Category.AUTH_REQUIRED, true, Action.REFRESH_AUTH, 401),
    SYNC_AUTH_LEASE_REVOKED("sync.auth_lease_revoked", Category.AUTH_REQUIRED, true, Action.REFRESH_AUTH, 401),
    SYNC_FORBIDDEN("sync.forbidden", Category.FORBIDDEN, false, Action.CHECK_PERMISSIONS, 403),
    SYNC_INVALID_REQUEST("sync.invalid_request", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    SYNC_INVALID_CLIENT_ID("sync.invalid_client_id", Category.INVALID_REQUEST, false, Action.RESET_CLIENT_ID, 400),
    SYNC_INVALID_SUBSCRIPTION("sync.invalid_subscription", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    SYNC_EMPTY_COMMIT("sync.empty_commit", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    SYNC_UNKNOWN_TABLE("sync.unknown_table", Category.SCHEMA_MISMATCH, false, Action.REGENERATE_CLIENT, 400),
    SYNC_ROW_MISSING("sync.row_missing", Category.NOT_FOUND, false, Action.FORCE_RESYNC, 404),
    /** Wire 3 (SPEC @008c36d5 §6.2): an unversioned upsert hit a row deleted within the horizon; push record only. */
    SYNC_ROW_DELETED("sync.row_deleted", Category.NOT_FOUND, false, Action.FIX_REQUEST, 404),
    SYNC_VERSION_CONFLICT("sync.version_conflict", Category.CONFLICT, false, Action.RESOLVE_CONFLICT, 409),
    SYNC_CONSTRAINT_VIOLATION("sync.constraint_violation", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    /** SPEC @008c36d5 §6.11: a declared reference failed (absent parent, RESTRICT, cascade cap); push record. */
    SYNC_REFERENCE_VIOLATION("sync.reference_violation", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    SYNC_MISSING_SCOPES("sync.missing_scopes", Category.INTERNAL, false, Action.INSPECT_SERVER, 500),
    SYNC_CRDT_MERGE_FAILED("sync.crdt_merge_failed", Category.INTERNAL, false, Action.INSPECT_SERVER, 500),
    SYNC_IDEMPOTENCY_CACHE_MISS("sync.idempotency_cache_miss", Category.INTERNAL, true, Action.RETRY_LATER, 500),
    SYNC_TOO_MANY_OPERATIONS("sync.too_many_operations", Category.INVALID_REQUEST, false, Action.SPLIT_BATCH, 400),
    SYNC_NOT_FOUND("sync.not_found", Category.NOT_FOUND, false, Action.FORCE_RESYNC, 404),
    SYNC_SEGMENT_EXPIRED("sync.segment_expired", Category.NOT_FOUND, true, Action.RETRY_LATER, 404),
    SYNC_CURSOR_EXPIRED("sync.cursor_expired", Category.RESET_REQUIRED, false, Action.REBOOTSTRAP, 400),
    SYNC_SCOPE_REVOKED("sync.scope_revoked", Category.SCOPE_REVOKED, false, Action.CHECK_PERMISSIONS, 403),
    SYNC_RATE_LIMITED("sync.rate_limited", Category.RATE_LIMITED, true, Action.RETRY_LATER, 429),
    SYNC_SCHEMA_MISMATCH("sync.schema_mismatch", Category.SCHEMA_MISMATCH, false, Action.REGENERATE_CLIENT, 400),
    SYNC_CLIENT_SCHEMA_UNSUPPORTED("sync.client_schema_unsupported", Category.SCHEMA_MISMATCH, false, Action.UPGRADE_CLIENT, 400),
    SYNC_CLIENT_WIRE_UNSUPPORTED("sync.client_wire_unsupported", Category.SCHEMA_MISMATCH, false, Action.UPGRADE_CLIENT, 400),
    SYNC_WEBSOCKET_CONNECTION_LIMIT("sync.websocket_connection_limit", Category.RATE_LIMITED, true, Action.RETRY_LATER, 429),
    /** seeds/002 errors.js: the serve gate refuses (a migration or backfill is in progress). */
    SYNC_SCHEMA_NOT_READY("sync.schema_not_ready", Category.INTERNAL, true, Action.RETRY_LATER, 503),
    /** Anything unexpected (database down, timeout, bug); never carries internal detail. */
    SYNC_INTERNAL_ERROR("sync.internal_error", Category.INTERNAL, true, Action.RETRY_LATER, 500),
    BLOB_NOT_FOUND("blob.not_found", Category.NOT_FOUND, false, Action.FIX_REQUEST, 404),
    BLOB_FORBIDDEN("blob.forbidden", Category.FORBIDDEN, false, Action.CHECK_PERMISSIONS, 403),
    BLOB_HASH_MISMATCH("blob.hash_mismatch", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 400),
    BLOB_TOO_LARGE("blob.too_large", Category.INVALID_REQUEST, false, Action.FIX_REQUEST, 413);

    /** §10.2 categories, by their wire spelling. */
    public enum Category {
        AUTH_REQUIRED("auth-required"), FORBIDDEN("forbidden"), INVALID_REQUEST("invalid-request"),
        NOT_FOUND("not-found"), CONFLICT("conflict"), SCHEMA_MISMATCH("schema-mismatch"),
        RESET_REQUIRED("reset-required"), SCOPE_REVOKED("scope-revoked"), RATE_LIMITED("rate-limited"),
        INTERNAL("internal");

        private final String wire;
        Category(String wire) { this.wire = wire; }
        public String wire() { return wire; }
    }

    /** §10.2 recommended actions (a closed set), by their wire spelling. */
    public enum Action {
        REFRESH_AUTH("refreshAuth"), CHECK_PERMISSIONS("checkPermissions"), FIX_REQUEST("fixRequest"),
        RESET_CLIENT_ID("resetClientId"), REGENERATE_CLIENT("regenerateClient"), UPGRADE_CLIENT("upgradeClient"),
        RESOLVE_CONFLICT("resolveConflict"), REBOOTSTRAP("rebootstrap"), FORCE_RESYNC("forceResync"),
        RETRY_LATER("retryLater"), SPLIT_BATCH("splitBatch"), INSPECT_SERVER("inspectServer");

        private final String wire;
        Action(String wire) { this.wire = wire; }
        public String wire() { return wire; }
    }

    private static final Map<String, ErrorCode> BY_WIRE = new HashMap<>();
    static {
        for (ErrorCode c : values()) BY_WIRE.put(c.wire, c);
    }

    private final String wire;
    private final Category category;
    private final boolean retryable;
    private final Action action;
    private final int httpStatus;

    ErrorCode(String wire, Category category, boolean retryable, Action action, int httpStatus) {
        this.wire = wire;
        this.category = category;
        this.retryable = retryable;
        this.action = action;
        this.httpStatus = httpStatus;
    }

    /** The code as it travels, e.g. {@code sync.invalid_request}. */
    public String wire() { return wire; }
    public Category category() { return category; }
    public boolean retryable() { return retryable; }
    public Action action() { return action; }
    public int httpStatus() { return httpStatus; }

    public static Optional<ErrorCode> forWire(String code) {
        return Optional.ofNullable(BY_WIRE.get(code));
    }
}

package syncular.jakarta.storage;

import java.util.Objects;

/**
 * One snapshot page (SPEC §4.7): current rows of {@code table} matching {@code scopes}, in byte order of row id,
 * strictly after {@code afterRowId} ({@code null} = from the start), at most {@code limit}. An empty filter is
 * refused with {@link StorageErrorCode#SCAN_REQUIRES_SCOPE}.
 */
public record RowScanQuery(String table, ScopeFilter scopes, String afterRowId, int limit) {
    public RowScanQuery {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(scopes, "scopes");
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1");
    }
}

package syncular.jakarta.host;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A declared projection backfill (RFC 0007, UPSTREAM-SERVER §3): a deployer's CDI bean (or a configured
 * {@code syncular.backfill.definitions} entry). Partition-agnostic: the migration to {@link #schemaVersion()} installs
 * one checkpoint named {@link #name()} (and raises the writer fence) in every partition the server knows, and a
 * process with this definition for its running version serves past those checkpoints while they are pending; a
 * process without it refuses with {@code sync.schema_not_ready} until they are activated.
 *
 * <p>The runner reads the source rows (keyset by row id in a full pass, from the change log in a catch-up pass) and
 * hands each batch to {@link #step}; the writes it returns go through the ordinary push path as the reserved system
 * client {@code ["backfill",<name>]}. Writes must be idempotent per source row (an upsert by a key derived from the
 * source row, or a delete): a catch-up pass presents a changed row again. Names must be unique per schema bump.
 */
public interface BackfillDefinition {
    /** The checkpoint name, unique per bump (checkpoints insert ON CONFLICT DO NOTHING, §3.3). */
    String name();

    /** The schema version this backfill belongs to: only a process running exactly this version declares it. */
    int schemaVersion();

    /** Source tables: a change to one of them above the watermark makes activation answer {@code stale}. */
    List<String> sourceTables();

    /** Maps one batch of source rows to projection writes; pure and deterministic (a batch may be retried). */
    List<ProjectionWrite> step(List<SourceRow> batch);

    /**
     * One source row as the current schema decodes it; {@code values} null when the row no longer exists (a
     * catch-up pass saw it deleted).
     */
    record SourceRow(String table, String rowId, Map<String, Object> values) {
        public SourceRow {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(rowId, "rowId");
            if (values != null) values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        }

        public boolean deleted() { return values == null; }
    }

    /**
     * An upsert of a projection row by column name (columns not given are NULL), or a delete when {@code values} is
     * null. The primary-key column must equal {@code rowId}; scope columns must be set (the system actor may write
     * any scope, but the row needs its scopes).
     */
    record ProjectionWrite(String table, String rowId, Map<String, Object> values) {
        public ProjectionWrite {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(rowId, "rowId");
            if (values != null) values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        }

        public static ProjectionWrite upsert(String table, String rowId, Map<String, Object> values) {
            return new ProjectionWrite(table, rowId, Objects.requireNonNull(values, "values"));
        }

        public static ProjectionWrite delete(String table, String rowId) { return new ProjectionWrite(table, rowId, null); }
    }
}

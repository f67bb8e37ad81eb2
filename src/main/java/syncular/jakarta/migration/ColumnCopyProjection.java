package syncular.jakarta.migration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import syncular.jakarta.host.BackfillDefinition;

/**
 * The configurable backfill ({@code syncular.backfill.definitions}): a projection table that copies, by column name,
 * the columns it shares with one source table, row for row under the same row id; a deleted source row deletes its
 * projection row. Entry syntax {@code name@version:source->target}, entries separated by commas, e.g.
 * {@code todo_titles_v2@2:todos->todo_titles}. Anything richer is a {@link BackfillDefinition} CDI bean.
 */
public record ColumnCopyProjection(String name, int schemaVersion, String source, String target)
        implements BackfillDefinition {
    public ColumnCopyProjection {
        if (name.isBlank() || source.isBlank() || target.isBlank()) {
            throw new IllegalArgumentException("name, source and target must be non-empty");
        }
        if (schemaVersion < 1) throw new IllegalArgumentException("the schema version must be at least 1");
    }

    /** Parses the configuration value; a malformed entry throws naming it. */
    public static List<BackfillDefinition> parseAll(String value) {
        List<BackfillDefinition> out = new ArrayList<>();
        if (value == null || value.isBlank()) return out;
        for (String raw : value.split(",")) {
            String entry = raw.trim();
            int at = entry.indexOf('@');
            int colon = entry.indexOf(':', Math.max(at, 0));
            int arrow = entry.indexOf("->", Math.max(colon, 0));
            if (at < 1 || colon < at + 2 || arrow < colon + 2 || arrow + 2 >= entry.length()) {
                throw new IllegalArgumentException("'" + entry + "' is not name@version:source->target");
            }
            int version;
            try {
                version = Integer.parseInt(entry.substring(at + 1, colon));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + entry + "' has no whole-number version");
            }
            out.add(new ColumnCopyProjection(entry.substring(0, at), version, entry.substring(colon + 1, arrow),
                    entry.substring(arrow + 2)));
        }
        return out;
    }

    @Override
    public List<String> sourceTables() { return List.of(source); }

    /**
     * Every source column goes along by name; the runner's encoder keeps only the target's columns and fills the
     * others with NULL, so a target with fewer columns is a projection, and one with extra nullable columns works.
     */
    @Override
    public List<ProjectionWrite> step(List<SourceRow> batch) {
        List<ProjectionWrite> writes = new ArrayList<>(batch.size());
        for (SourceRow row : batch) {
            if (!row.table().equals(source)) continue;
            writes.add(row.deleted() ? ProjectionWrite.delete(target, row.rowId())
                    : ProjectionWrite.upsert(target, row.rowId(), new LinkedHashMap<String, Object>(row.values())));
        }
        return writes;
    }

    @Override
    public String toString() { return name + "@" + schemaVersion + ":" + source + "->" + target; }
}

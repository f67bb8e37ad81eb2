package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.PendingCheckpoint;
import syncular.jakarta.storage.SourceCoverage;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.StoredRow;

/**
 * The RFC 0007 backfill runner's SQL (issue 7): the pass-position table {@code sync_backfill_passes}, the claim,
 * keyset reads of source rows and of the change log, and the reads the declaration set and the operator surface
 * need; each on the connection it is given. {@link PostgresTransaction} runs the batch's share on the batch's own
 * transaction (so a batch's projection commit, its log entry, the checkpoint watermark and the position commit
 * together or not at all), {@link PostgresServerStorage} the rest on connections of its own.
 */
final class BackfillSql {
    private BackfillSql() { }

    /** One row per (partition, checkpoint name): the pass in progress or the last one. */
    static final String CREATE_TABLE = """
            CREATE TABLE IF NOT EXISTS sync_backfill_passes(
              partition TEXT NOT NULL, name TEXT NOT NULL,
              pass INTEGER NOT NULL,
              mode TEXT NOT NULL CHECK (mode IN ('full', 'catch-up')),
              source_index INTEGER NOT NULL DEFAULT 0,
              after_row_id TEXT COLLATE "C",
              after_seq BIGINT NOT NULL DEFAULT 0,
              after_idx INTEGER NOT NULL DEFAULT 0,
              from_seq BIGINT NOT NULL DEFAULT 0,
              watermark BIGINT NOT NULL,
              exhausted BOOLEAN NOT NULL DEFAULT FALSE,
              pass_rows BIGINT NOT NULL DEFAULT 0,
              batches BIGINT NOT NULL DEFAULT 0,
              started_at_ms BIGINT NOT NULL,
              updated_at_ms BIGINT NOT NULL,
              PRIMARY KEY (partition, name)
            )""";

    private static final String PASS_COLUMNS = "partition, name, pass, mode, source_index, after_row_id, after_seq, "
            + "after_idx, from_seq, watermark, exhausted, pass_rows, batches, started_at_ms, updated_at_ms";

    static final String SAVE_PASS = "INSERT INTO sync_backfill_passes(" + PASS_COLUMNS + """
            ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (partition, name) DO UPDATE SET pass = EXCLUDED.pass, mode = EXCLUDED.mode,
              source_index = EXCLUDED.source_index, after_row_id = EXCLUDED.after_row_id,
              after_seq = EXCLUDED.after_seq, after_idx = EXCLUDED.after_idx, from_seq = EXCLUDED.from_seq,
              watermark = EXCLUDED.watermark, exhausted = EXCLUDED.exhausted, pass_rows = EXCLUDED.pass_rows,
              batches = EXCLUDED.batches, started_at_ms = EXCLUDED.started_at_ms,
              updated_at_ms = EXCLUDED.updated_at_ms""";

    /** Changed source rows of a catch-up pass, in log order, through the log's primary key. */
    static final String CHANGED_ROWS = """
            SELECT commit_seq, idx, tbl, row_id FROM sync_changes
             WHERE partition = ? AND (commit_seq, idx) > (?, ?) AND commit_seq <= ? AND tbl = ANY(?::text[])
             ORDER BY commit_seq, idx LIMIT ?""";

    static final String PENDING = """
            SELECT partition, name FROM sync_backfill_checkpoints
             WHERE schema_version = ? AND state <> 'activated' AND name = ANY(?::text[]) ORDER BY partition, name""";

    /** The partitions a migration installs checkpoints for: every one the log or the registry knows. */
    static final String KNOWN_PARTITIONS = """
            SELECT partition FROM sync_partitions UNION SELECT partition FROM sync_partition_registry
             ORDER BY 1""";

    /**
     * A partition first seen after the migration: its fence rises to the running version (never lowered), so an
     * old binary cannot append there either.
     */
    static final String RAISE_REGISTRY_FENCES = """
            INSERT INTO sync_writer_fence(partition, required_writer_version)
            SELECT r.partition, ? FROM sync_partition_registry r
             WHERE NOT EXISTS (SELECT 1 FROM sync_writer_fence f
                                WHERE f.partition = r.partition AND f.required_writer_version >= ?)
            ON CONFLICT (partition) DO UPDATE
              SET required_writer_version = GREATEST(sync_writer_fence.required_writer_version,
                                                     EXCLUDED.required_writer_version)""";

    static final String REPORT = "SELECT c." + CommitLogSql.CHECKPOINT_COLUMNS.replace(", ", ", c.")
            + ", p.pass, p.mode, p.source_index, p.after_row_id, p.after_seq, p.after_idx, p.from_seq, p.watermark,"
            + " p.exhausted, p.pass_rows, p.batches, p.started_at_ms, p.updated_at_ms"
            + " FROM sync_backfill_checkpoints c LEFT JOIN sync_backfill_passes p"
            + " ON p.partition = c.partition AND p.name = c.name ORDER BY c.partition, c.name";

    // ------------------------------------------------ on the batch transaction

    /** {@code claimCheckpoint} on the batch's connection: owner epoch + 1; empty when activated or absent. */
    static Optional<StoredCheckpoint> claimOn(Connection c, String partition, String name, int schemaVersion,
                                              long nowMs) {
        return sql(() -> CommitLogSql.claimCheckpoint(c, partition, name, schemaVersion, nowMs));
    }

    static Optional<BackfillPass> readPassOn(Connection c, String partition, String name) {
        return sql(() -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT " + PASS_COLUMNS
                    + " FROM sync_backfill_passes WHERE partition = ? AND name = ?")) {
                ps.setString(1, partition);
                ps.setString(2, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(pass(rs, 1)) : Optional.empty();
                }
            }
        });
    }

    static void savePassOn(Connection c, BackfillPass p) {
        sql(() -> {
            try (PreparedStatement ps = c.prepareStatement(SAVE_PASS)) {
                int i = 1;
                ps.setString(i++, p.partition());
                ps.setString(i++, p.name());
                ps.setInt(i++, p.pass());
                ps.setString(i++, p.mode().stored());
                ps.setInt(i++, p.sourceIndex());
                if (p.afterRowId() == null) ps.setNull(i++, Types.VARCHAR); else ps.setString(i++, p.afterRowId());
                ps.setLong(i++, p.afterSeq());
                ps.setInt(i++, p.afterIdx());
                ps.setLong(i++, p.fromSeq());
                ps.setLong(i++, p.watermark());
                ps.setBoolean(i++, p.exhausted());
                ps.setLong(i++, p.passRows());
                ps.setLong(i++, p.batches());
                ps.setLong(i++, p.startedAtMs());
                ps.setLong(i, p.updatedAtMs());
                ps.executeUpdate();
            }
            return null;
        });
    }

    /** Current rows of a source table after {@code afterRowId} in byte order of row id (keyset, no OFFSET). */
    static List<StoredRow> scanSourceOn(Connection c, RowTable t, String partition, String afterRowId, int limit) {
        String sql = "SELECT " + RowTable.quoteIdent(RowTable.ROW_ID) + ", " + RowTable.quoteIdent(RowTable.VERSION)
                + ", " + RowTable.quoteIdent(RowTable.SCOPES) + "::text, " + RowTable.quoteIdent(RowTable.PAYLOAD)
                + " FROM " + t.quoted + " WHERE " + RowTable.quoteIdent(RowTable.PARTITION) + " = ? AND "
                + RowTable.quoteIdent(RowTable.ROW_ID) + " > ? ORDER BY " + RowTable.quoteIdent(RowTable.ROW_ID)
                + " LIMIT ?";
        return sql(() -> {
            List<StoredRow> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, partition);
                ps.setString(2, afterRowId == null ? "" : afterRowId);
                ps.setInt(3, limit);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(PostgresServerStorage.rowFrom(rs));
                }
            }
            return out;
        });
    }

    /** Source changes in the log after ({@code afterSeq}, {@code afterIdx}) and at or below {@code throughSeq}. */
    static List<BackfillPass.ChangedRow> changedRowsOn(Connection c, String partition, Collection<String> tables,
                                                       long afterSeq, int afterIdx, long throughSeq, int limit) {
        return sql(() -> {
            List<BackfillPass.ChangedRow> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(CHANGED_ROWS)) {
                ps.setString(1, partition);
                ps.setLong(2, afterSeq);
                ps.setInt(3, afterIdx);
                ps.setLong(4, throughSeq);
                ps.setArray(5, c.createArrayOf("text", tables.toArray()));
                ps.setInt(6, limit);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(new BackfillPass.ChangedRow(rs.getLong(1), rs.getInt(2), rs.getString(3),
                            rs.getString(4)));
                }
            }
            return out;
        });
    }

    /** {@code sourceCoverageSeq} on the batch's connection: the watermark a pass starting now certifies. */
    static long coverageOn(Connection c, String partition, Collection<String> tables) {
        if (tables.isEmpty()) return 0;
        return sql(() -> {
            try (PreparedStatement ps = c.prepareStatement(CommitLogSql.SOURCE_COVERAGE_SEQ)) {
                ps.setString(1, partition);
                ps.setArray(2, c.createArrayOf("text", tables.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    /** The partition's pruning horizon on the batch's connection (0 when the partition has no log row). */
    static long horizonOn(Connection c, String partition) {
        return sql(() -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT COALESCE((SELECT horizon_seq FROM sync_partitions WHERE partition = ?), 0)")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    /** {@code hasSourceChangesAbove} on the batch's connection. */
    static SourceCoverage changesAboveOn(Connection c, String partition, Collection<String> tables, long seq) {
        return sql(() -> PostgresServerStorage.sourceChangesAboveOn(c, partition, tables, seq));
    }

    // ------------------------------------------------------ whole-database reads

    /** Non-activated checkpoints at {@code schemaVersion} with one of {@code names}, in every partition. */
    static List<PendingCheckpoint> pendingOn(Connection c, int schemaVersion, Collection<String> names)
            throws SQLException {
        if (names.isEmpty()) return List.of();
        List<PendingCheckpoint> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(PENDING)) {
            ps.setInt(1, schemaVersion);
            ps.setArray(2, c.createArrayOf("text", names.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(new PendingCheckpoint(rs.getString(1), rs.getString(2)));
            }
        }
        return out;
    }

    /** Every partition in {@code sync_partitions} ∪ {@code sync_partition_registry}. */
    static List<String> knownPartitionsOn(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(KNOWN_PARTITIONS); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }

    /** Raises every registered partition's fence to at least {@code version}; returns how many rows moved. */
    static int raiseRegistryFencesOn(Connection c, int version) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RAISE_REGISTRY_FENCES)) {
            ps.setInt(1, version);
            ps.setInt(2, version);
            return ps.executeUpdate();
        }
    }

    /** Pauses ({@code pausedAtMs}) or resumes (null) a checkpoint that is not activated; false when there is none. */
    static boolean setPausedOn(Connection c, String partition, String name, Long pausedAtMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE sync_backfill_checkpoints SET paused_at_ms = ? "
                + "WHERE partition = ? AND name = ? AND state <> 'activated'")) {
            if (pausedAtMs == null) ps.setNull(1, java.sql.Types.BIGINT);
            else ps.setLong(1, pausedAtMs);
            ps.setString(2, partition);
            ps.setString(3, name);
            return ps.executeUpdate() == 1;
        }
    }

    /** Every checkpoint with its pass position, for the operator surface. */
    static List<BackfillPass.Progress> progressOn(Connection c) throws SQLException {
        List<BackfillPass.Progress> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(REPORT); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                StoredCheckpoint cp = CommitLogSql.checkpoint(rs, 1);
                Optional<BackfillPass> p = Optional.empty();
                if (rs.getObject(10) != null) {
                    p = Optional.of(new BackfillPass(cp.partition(), cp.name(), rs.getInt(10),
                            BackfillPass.Mode.fromStored(rs.getString(11)),
                            rs.getInt(12), rs.getString(13), rs.getLong(14), rs.getInt(15), rs.getLong(16),
                            rs.getLong(17), rs.getBoolean(18), rs.getLong(19), rs.getLong(20), rs.getLong(21),
                            rs.getLong(22)));
                }
                out.add(new BackfillPass.Progress(cp, p));
            }
        }
        return out;
    }

    /** Rows a full pass over {@code tables} visits in this partition (for the ETA; a count, not on a hot path). */
    static long countSourceRowsOn(Connection c, List<RowTable> tables, String partition) throws SQLException {
        long total = 0;
        for (RowTable t : tables) {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + t.quoted + " WHERE "
                    + RowTable.quoteIdent(RowTable.PARTITION) + " = ?")) {
                ps.setString(1, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    total += rs.getLong(1);
                }
            }
        }
        return total;
    }

    /** Log entries a catch-up pass over ({@code fromSeq}, {@code throughSeq}] visits (for the ETA). */
    static long countChangesOn(Connection c, String partition, Collection<String> tables, long fromSeq,
                               long throughSeq) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM sync_changes WHERE partition = ? "
                + "AND commit_seq > ? AND commit_seq <= ? AND tbl = ANY(?::text[])")) {
            ps.setString(1, partition);
            ps.setLong(2, fromSeq);
            ps.setLong(3, throughSeq);
            ps.setArray(4, c.createArrayOf("text", tables.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    // ----------------------------------------------------------- plumbing

    private static BackfillPass pass(ResultSet rs, int i) throws SQLException {
        return new BackfillPass(rs.getString(i), rs.getString(i + 1), rs.getInt(i + 2),
                BackfillPass.Mode.fromStored(rs.getString(i + 3)),
                rs.getInt(i + 4), rs.getString(i + 5), rs.getLong(i + 6), rs.getInt(i + 7), rs.getLong(i + 8),
                rs.getLong(i + 9), rs.getBoolean(i + 10), rs.getLong(i + 11), rs.getLong(i + 12), rs.getLong(i + 13),
                rs.getLong(i + 14));
    }

    @FunctionalInterface
    private interface Sql<T> {
        T run() throws SQLException;
    }

    private static <T> T sql(Sql<T> work) {
        try {
            return work.run();
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }
}

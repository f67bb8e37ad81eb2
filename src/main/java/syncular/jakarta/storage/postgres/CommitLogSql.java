package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import syncular.jakarta.storage.CheckpointState;
import syncular.jakarta.storage.StoredCheckpoint;

/**
 * The SQL of the commit log, the partition lock and RFC 0007, as constants beside their users so tests
 * ({@code PostgresExplainTest}) run exactly the text the storage executes.
 */
final class CommitLogSql {
    private CommitLogSql() { }

    static final String SET_READ_COMMITTED = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";

    /**
     * The partition lock, exactly upstream's (SPEC-DIGEST §8.1, seeds/003 {@code lockPartitionOn}): make sure the
     * row exists, then {@code SELECT … FOR UPDATE} it. That row lock is what activation shares with a push and
     * what a migration's {@code LOCK TABLE … EXCLUSIVE} conflicts with. Sent with the push savepoint as ONE round
     * trip (pgjdbc pipelines the three statements); params: partition, partition.
     */
    static final String LOCK_PARTITION_INSERT =
            "INSERT INTO sync_partitions(partition, max_commit_seq) VALUES (?, 0) ON CONFLICT (partition) DO NOTHING";
    static final String LOCK_PARTITION_SELECT =
            "SELECT max_commit_seq, horizon_seq FROM sync_partitions WHERE partition = ? FOR UPDATE";
    static final String PUSH_SAVEPOINT = "SAVEPOINT syncular_push_candidate";
    /**
     * The database's clock now, in microseconds (a statement of a pipelined round trip runs when the one before it
     * has finished).
     */
    static final String CLOCK_MICROS = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";
    static final String LOCK_PARTITION = LOCK_PARTITION_INSERT + ";\n" + LOCK_PARTITION_SELECT;
    static final String LOCK_PARTITION_FOR_PUSH = LOCK_PARTITION + ";\n" + PUSH_SAVEPOINT;
    static final String RELEASE_PUSH_SAVEPOINT = "RELEASE SAVEPOINT syncular_push_candidate";
    /** Back to the push savepoint, keeping it (a later rejection rolls back to it again). */
    static final String ROLLBACK_TO_SAVEPOINT_KEEP = "ROLLBACK TO SAVEPOINT syncular_push_candidate";
    static final String ROLLBACK_TO_PUSH_SAVEPOINT =
            "ROLLBACK TO SAVEPOINT syncular_push_candidate;\nRELEASE SAVEPOINT syncular_push_candidate";

    /**
     * The final select of an append that signals the commit feed: the seq, and the realtime notice (SPEC §8.2,
     * {@code PostgresCommitFeed}) queued inside the commit's transaction, so PostgreSQL delivers it iff the commit
     * commits.
     */
    static final String APPEND_SELECT =
            "SELECT commit_seq, pg_notify('" + PostgresCommitFeed.CHANNEL + "', partition || ':' || commit_seq) FROM c";

    /**
     * The tombstones (SPEC §2.2 and §4.6 at wire 3, WIRE3-DELTA §4) of an append's changes, as CTEs after the change
     * insert {@code ch} (which RETURNs partition, commit_seq, idx, tbl, row_id, op, row_version): per row, its last
     * change in the statement decides; a delete records (or moves up) the row's tombstone at its commit, an insert
     * (an upsert at version 1, which only a write over an absent row makes) clears it. Every applied delete of every
     * wire version and of the backfill records one, so the log a wire-3 client relies on has no gap. No parameters.
     */
    /** The (tbl, row_id) pairs of a partition that have a tombstone. Params: partition, tbl[], rowId[]. */
    static final String TOMBSTONES_OF = """
            SELECT t.tbl, t.row_id FROM sync_tombstones t
             WHERE t.partition = ?
               AND (t.tbl, t.row_id) IN (SELECT k.tbl, k.row_id FROM unnest(?::text[], ?::text[]) AS k(tbl, row_id))""";

    static final String TOMBSTONES = """
            last_change AS (
              SELECT DISTINCT ON (tbl, row_id) partition, tbl, row_id, op, row_version, commit_seq
                FROM ch ORDER BY tbl, row_id, commit_seq DESC, idx DESC),
            tombstoned AS (
              INSERT INTO sync_tombstones(partition, tbl, row_id, commit_seq)
              SELECT partition, tbl, row_id, commit_seq FROM last_change WHERE op = 2
              ON CONFLICT (partition, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq),
            untombstoned AS (
              DELETE FROM sync_tombstones t USING last_change l
               WHERE l.op = 1 AND l.row_version = 1
                 AND t.partition = l.partition AND t.tbl = l.tbl AND t.row_id = l.row_id)""";

    /**
     * One statement appends a whole commit: the commit row stamped with the writer version (the fence trigger checks
     * it), its changes and their change-scope index entries, from arrays; optionally its applied push result, with
     * the commit's seq written into the result's {@code commitSeq} (first writer wins, as {@link #PUT_PUSH_RESULT}).
     *
     * <p>Where the seq comes from ({@link Numbering}):
     * <ul>
     *   <li>{@code ALLOCATE}: the statement allocates the partition's next dense seq itself (the upsert's row lock
     *       serializes concurrent appends to one partition and a rollback leaves no gap, unlike a SEQUENCE) and
     *       queues the commit's realtime notice (SPEC §8.2, {@code PostgresCommitFeed}) inside the commit's
     *       transaction, so PostgreSQL delivers it iff the commit commits.</li>
     *   <li>{@code GIVEN}: under the push lock the transaction numbers its commits from the locked head and leaves
     *       the partition row alone: a push group writes that hot row once, not once per commit, when it writes the
     *       head back with ONE notice for every commit numbered since ({@link #PUBLISH_HEAD}; the feed reports each
     *       seq up to a notice's).</li>
     * </ul>
     * A rejection's rollback to the push savepoint discards whatever its statement wrote and queued.
     *
     * <p>Params: {@code ALLOCATE}: partition; partition, clientId, clientCommitId, actorId, createdAtMs,
     * writerVersion. {@code GIVEN}: partition, seq, clientId, clientCommitId, actorId, createdAtMs, writerVersion.
     * Then: partition, idx[], tbl[], rowId[], op[], rowVersion[], scopes[], payload[]; partition, tbl[], var[],
     * value[]; with a result: partition, clientId, clientCommitId, result JSON.
     */
    static String appendCommit(Numbering numbering, boolean withResult) {
        return APPEND[numbering.ordinal() * 2 + (withResult ? 1 : 0)];
    }

    /** How an append gets its seq (see {@link #appendCommit}). */
    enum Numbering { ALLOCATE, GIVEN }

    private static final String[] APPEND = new String[Numbering.values().length * 2];

    static {
        for (Numbering n : Numbering.values()) {
            for (boolean withResult : new boolean[] {false, true}) {
                APPEND[n.ordinal() * 2 + (withResult ? 1 : 0)] = buildAppend(n, withResult);
            }
        }
    }

    private static String buildAppend(Numbering numbering, boolean withResult) {
        String commit = numbering == Numbering.ALLOCATE ? """
                WITH allocated AS (
                  INSERT INTO sync_partitions(partition, max_commit_seq) VALUES (?, 1)
                  ON CONFLICT (partition) DO UPDATE SET max_commit_seq = sync_partitions.max_commit_seq + 1
                  RETURNING max_commit_seq),
                c AS (
                  INSERT INTO sync_commits(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,
                                           writer_version)
                  SELECT ?, max_commit_seq, ?, ?, ?, ?, ? FROM allocated
                  RETURNING partition, commit_seq),
                """ : """
                WITH c AS (
                  INSERT INTO sync_commits(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,
                                           writer_version)
                  VALUES (?, ?, ?, ?, ?, ?, ?)
                  RETURNING partition, commit_seq),
                """;
        String changes = """
                ch AS (
                  INSERT INTO sync_changes(partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload)
                  SELECT ?, c.commit_seq, u.idx, u.tbl, u.row_id, u.op, u.row_version, u.scopes::jsonb, u.payload
                    FROM c, unnest(?::int[], ?::text[], ?::text[], ?::smallint[], ?::bigint[], ?::text[], ?::bytea[])
                         AS u(idx, tbl, row_id, op, row_version, scopes, payload)
                  RETURNING partition, commit_seq, idx, tbl, row_id, op, row_version),
                cs AS (
                  INSERT INTO sync_change_scopes(partition, tbl, var, value, commit_seq)
                  SELECT ?, v.tbl, v.var, v.value, c.commit_seq
                    FROM c, unnest(?::text[], ?::text[], ?::text[]) AS v(tbl, var, value)
                  ON CONFLICT DO NOTHING),
                """ + TOMBSTONES;
        String result = !withResult ? "" : """
                ,
                pr AS (
                  INSERT INTO sync_push_results(partition, client_id, client_commit_id, result)
                  SELECT ?, ?, ?, jsonb_set(?::jsonb, '{commitSeq}', to_jsonb(c.commit_seq)) FROM c
                  ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING)""";
        String select = numbering == Numbering.GIVEN ? "\nSELECT commit_seq FROM c" : "\n" + APPEND_SELECT;
        return commit + changes + result + select;
    }

    /**
     * Writes the push lock's numbered head back to the partition row and queues one notice for every commit numbered
     * since the last write-back (see {@link #appendCommit}). Params: seq, partition.
     */
    static final String PUBLISH_HEAD = """
            WITH h AS (UPDATE sync_partitions SET max_commit_seq = ? WHERE partition = ?
                       RETURNING partition, max_commit_seq)
            SELECT pg_notify('""" + PostgresCommitFeed.CHANNEL + "', partition || ':' || max_commit_seq) FROM h";

    /**
     * One commit-window page in one round trip (relational-rows.ts {@code commitWindowPageSql}): candidate commits
     * from the covering change-scope index, ordered and limited there, then for each candidate its commit and its
     * changes of the table (LEFT: a vanished candidate still advances the cursor). Params: partition, tbl, var,
     * values[], afterSeq, throughSeq, limit, partition, partition, tbl.
     *
     * <p>The per-candidate lookups are LATERAL subqueries fenced with {@code OFFSET 0}, so they cannot be flattened
     * into ordinary joins: every plan, the generic one a prepared statement caches included, probes the commit and
     * change indexes once per candidate. As plain joins, a generic plan cached while the log was small and
     * unanalyzed joined against the partition's whole log, hundreds of milliseconds per page once it grew
     * ({@code PostgresPlanCacheTest}, issue 14).
     */
    static final String COMMIT_WINDOW_ROWS = """
            SELECT c.commit_seq, m.actor_id, m.created_at_ms, ch.tbl, ch.row_id, ch.op, ch.row_version,
                   ch.scopes::text, ch.payload, ch.idx
              FROM (SELECT DISTINCT commit_seq FROM sync_change_scopes
                     WHERE partition = ? AND tbl = ? AND var = ? AND value = ANY(?::text[])
                       AND commit_seq > ? AND commit_seq <= ?
                     ORDER BY commit_seq LIMIT ?) c
              LEFT JOIN LATERAL (SELECT actor_id, created_at_ms FROM sync_commits
                                  WHERE partition = ? AND commit_seq = c.commit_seq OFFSET 0) m ON TRUE
              LEFT JOIN LATERAL (SELECT idx, tbl, row_id, op, row_version, scopes, payload FROM sync_changes
                                  WHERE partition = ? AND commit_seq = c.commit_seq AND tbl = ? OFFSET 0) ch ON TRUE""";
    static final String COMMIT_WINDOW_PAGE = COMMIT_WINDOW_ROWS + "\n ORDER BY c.commit_seq, ch.idx";

    /**
     * A window page, then the partition's horizon in the same round trip: the horizon statement runs after the page
     * statement (its own snapshot), so a prune that deleted commits of the page range before or while the page was
     * read has raised it (prunes delete and raise in one transaction). Params: the page's, then partition.
     */
    static final String HORIZON = "SELECT horizon_seq FROM sync_partitions WHERE partition = ?";
    static final String COMMIT_WINDOW_PAGE_THEN_HORIZON = COMMIT_WINDOW_PAGE + ";\n" + HORIZON;

    /**
     * A request's end riding on its window page ({@code RequestEnd}, issue 15): the page and the horizon, then the
     * serve gate, read after both. Params: the page's, partition, then partition, running schema version.
     */
    static final String HORIZON_THEN_GATE = HORIZON + ";\n" + CommitLogSql.READ_SERVE_GATE;
    static final String COMMIT_WINDOW_PAGE_THEN_GATE = COMMIT_WINDOW_PAGE + ";\n" + HORIZON_THEN_GATE;

    /**
     * {@link #COMMIT_WINDOW_PAGE_THEN_GATE} storing the request's client record in the page's statement (one
     * snapshot, one atomic statement) when the page is the rest of the log: fewer candidate commits than the page may
     * hold and at most the given number of the table's changes, so no limit cut the window and the record's
     * cursor, the log head's, is the one the pull answers. The page is materialized once for the guard and the
     * answer. Params: the page's, the record's seven, the page size, the change bound, then as
     * {@link #COMMIT_WINDOW_PAGE_THEN_GATE} after its page.
     */
    static final String COMMIT_WINDOW_PAGE_RECORDING_THEN_GATE = "WITH page AS MATERIALIZED (\n" + COMMIT_WINDOW_ROWS
            + "),\nrecorded AS (\n" + PostgresServerStorage.putClientRecord("""
                    SELECT ?, ?, ?, ?, ?, ?::jsonb, ?
                     WHERE (SELECT count(DISTINCT commit_seq) FROM page) < ?
                       AND (SELECT count(*) FROM page WHERE tbl IS NOT NULL) <= ?""")
            + ")\nSELECT * FROM page ORDER BY commit_seq, idx;\n" + HORIZON_THEN_GATE;

    static final String PUT_PUSH_RESULT = """
            INSERT INTO sync_push_results(partition, client_id, client_commit_id, result) VALUES (?, ?, ?, ?::jsonb)
            ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING""";

    /**
     * The stored results of a push group's commits: one primary-key probe per (clientId, clientCommitId) pair, the
     * pairs zipped from two arrays of equal length. The probe is a LATERAL subquery fenced with {@code OFFSET 0}, so
     * no plan (the generic one a prepared statement caches included) can flatten it into a join that scans the
     * partition's results under the push lock (a plain {@code unnest} join did: 0.9 ms a group). It was a superset
     * read ({@code client_id = ANY(…) AND client_commit_id = ANY(…)}) before: every client of a group times every
     * commit id, growing with the square of the group (measured a call: 0.34 ms for 8 commits and 1.2 ms for 19,
     * against 0.12 and 0.21 ms by pairs; docs/benchmarks.md). Params: clientIds[], clientCommitIds[], partition.
     */
    static final String GET_PUSH_RESULTS_OF = """
            SELECT r.client_id, r.client_commit_id, r.result::text
              FROM unnest(?::text[], ?::text[]) AS k(client_id, client_commit_id)
              CROSS JOIN LATERAL (SELECT client_id, client_commit_id, result FROM sync_push_results
                                   WHERE partition = ? AND client_id = k.client_id
                                     AND client_commit_id = k.client_commit_id
                                  OFFSET 0) r""";

    static final String GET_PUSH_RESULT =
            "SELECT result::text FROM sync_push_results WHERE partition = ? AND client_id = ? AND client_commit_id = ?";

    // ------------------------------------------------------------------ RFC 0007

    /**
     * The serve-gate token in one statement (seeds/003 {@code readServeGateOn}: marker, epoch, pending). Pending is
     * read across ALL partitions on purpose (UPSTREAM-SERVER §3.5). Params: partition, runningSchemaVersion.
     */
    static final String READ_SERVE_GATE = """
            SELECT 'e' AS k, log_epoch AS a, NULL AS b FROM sync_partition_registry WHERE partition = ?
            UNION ALL
            SELECT 'm', schema_version::text, NULL FROM sync_schema_meta WHERE id = 1
            UNION ALL
            SELECT 'p', partition, name FROM sync_backfill_checkpoints WHERE schema_version = ? AND state <> 'activated'
            ORDER BY 1, 2, 3""";

    static final String CHECKPOINT_COLUMNS =
            "partition, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms, paused_at_ms";

    /** seeds/003 {@code installCheckpointOn}: never re-declares a row and never lowers a fence. */
    static final String INSTALL_CHECKPOINT = """
            INSERT INTO sync_backfill_checkpoints(partition, name, schema_version, state, watermark, owner_epoch,
                                                  observed_rows, updated_at_ms)
            VALUES (?, ?, ?, 'declared', 0, 0, 0, ?)
            ON CONFLICT (partition, name) DO NOTHING""";
    static final String RAISE_FENCE = """
            INSERT INTO sync_writer_fence(partition, required_writer_version) VALUES (?, ?)
            ON CONFLICT (partition) DO UPDATE SET
              required_writer_version = GREATEST(sync_writer_fence.required_writer_version,
                                                 EXCLUDED.required_writer_version)""";

    /**
     * The UPDATE's row lock serializes claimers; owner_epoch + 1 is evaluated under it (seeds/003). A paused
     * checkpoint is not claimed: its batches and its activation wait for the operator's resume.
     */
    static final String CLAIM_CHECKPOINT = """
            UPDATE sync_backfill_checkpoints
               SET owner_epoch = owner_epoch + 1,
                   state = CASE WHEN state = 'declared' THEN 'backfilling' ELSE state END,
                   schema_version = ?, updated_at_ms = ?
             WHERE partition = ? AND name = ? AND state <> 'activated' AND paused_at_ms IS NULL
            RETURNING\s""" + CHECKPOINT_COLUMNS;

    /** Checked with RETURNING, not an update count (seeds/003). No state predicate, as upstream. */
    static final String ADVANCE_CHECKPOINT = """
            UPDATE sync_backfill_checkpoints SET watermark = ?, observed_rows = ?, updated_at_ms = ?
             WHERE partition = ? AND name = ? AND owner_epoch = ?
            RETURNING name""";

    static final String READ_FENCE_AND_CHECKPOINT = """
            SELECT (SELECT required_writer_version FROM sync_writer_fence WHERE partition = ?),
                   (SELECT schema_version FROM sync_backfill_checkpoints WHERE partition = ? AND name = ?)""";

    static final String ACTIVATE_CHECKPOINT = """
            UPDATE sync_backfill_checkpoints SET state = 'activated', watermark = ?, updated_at_ms = ?
             WHERE partition = ? AND name = ? AND owner_epoch = ? AND state <> 'activated'
            RETURNING partition""";

    /**
     * seeds/003 {@code hasSourceChangesAboveOn} in ONE statement, so the horizon and the scan share a snapshot: a
     * prune deletes the log and raises the horizon in one transaction, so this sees both or neither.
     * The probe is a {@code min(commit_seq)} rather than an EXISTS: the min/max rewrite walks the primary key from
     * {@code seq} upwards and stops at the first source change, where a generic plan for EXISTS estimated a third
     * of the log and chose a sequential scan ({@code PostgresExplainTest}). Params: partition, partition, tables[],
     * seq.
     */
    static final String SOURCE_CHANGES_ABOVE = """
            SELECT COALESCE((SELECT horizon_seq FROM sync_partitions WHERE partition = ?), 0),
                   (SELECT min(commit_seq) FROM sync_changes
                     WHERE partition = ? AND tbl = ANY(?::text[]) AND commit_seq > ?) IS NOT NULL""";

    static final String SOURCE_COVERAGE_SEQ =
            "SELECT COALESCE(max(commit_seq), 0) FROM sync_changes WHERE partition = ? AND tbl = ANY(?::text[])";

    /** Runs {@link #CLAIM_CHECKPOINT} on {@code c}; empty when the checkpoint is activated or absent. */
    static Optional<StoredCheckpoint> claimCheckpoint(Connection c, String partition, String name, int schemaVersion,
                                                      long nowMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CLAIM_CHECKPOINT)) {
            ps.setInt(1, schemaVersion);
            ps.setLong(2, nowMs);
            ps.setString(3, partition);
            ps.setString(4, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(checkpoint(rs, 1)) : Optional.empty();
            }
        }
    }

    /** A {@link #CHECKPOINT_COLUMNS} row read from column {@code from} on. */
    static StoredCheckpoint checkpoint(ResultSet rs, int from) throws SQLException {
        return new StoredCheckpoint(rs.getString(from), rs.getString(from + 1), rs.getInt(from + 2),
                CheckpointState.fromStored(rs.getString(from + 3)), rs.getLong(from + 4), rs.getLong(from + 5),
                rs.getLong(from + 6), rs.getLong(from + 7), (Long) rs.getObject(from + 8));
    }
}

package syncular.jakarta.storage.postgres;

import java.util.List;

/**
 * The storage-internal DDL: the seeds' {@code POSTGRES_DDL} (seeds/002 {@code dist/postgres-storage.d.ts} at 0.23,
 * seeds/003 at 0.24), the schema marker, and the RFC 0007 writer-fence trigger.
 *
 * <p>Deviation from the seed text, on purpose: every {@code row_id} column is {@code COLLATE "C"}. Keyset pages and
 * the scope index order by row id, and the protocol orders by bytes (UTF-8 byte order equals code-point order); a
 * database created with a linguistic default collation would otherwise page in a different order than a client or
 * the SQLite reference, and the covering index could not serve a {@code COLLATE "C"} ordering.
 */
final class PostgresDdl {
    private PostgresDdl() { }

    /** Probed before taking any lock: when all exist and the fence function is current, migrate() is a no-op. */
    static final List<String> TABLES = List.of("sync_partitions", "sync_partition_registry", "sync_row_scopes",
            "sync_commits", "sync_changes", "sync_change_scopes", "sync_push_results", "sync_reactions",
            "sync_clients", "sync_blob_refs", "sync_tombstones", "sync_backfill_checkpoints", "sync_writer_fence",
            "sync_schema_meta");

    static final String CREATE_PARTITIONS = """
            CREATE TABLE IF NOT EXISTS sync_partitions(
              partition TEXT PRIMARY KEY,
              max_commit_seq BIGINT NOT NULL DEFAULT 0,
              horizon_seq BIGINT NOT NULL DEFAULT 0
            )""";

    /** Every statement after {@link #CREATE_PARTITIONS}, each idempotent, in order. */
    static final List<String> STATEMENTS = List.of("""
            CREATE TABLE IF NOT EXISTS sync_partition_registry(
              partition TEXT PRIMARY KEY,
              log_epoch TEXT NOT NULL,
              epoch_required BOOLEAN NOT NULL DEFAULT FALSE,
              last_authenticated_at_ms BIGINT NOT NULL
            )""", """
            CREATE TABLE IF NOT EXISTS sync_row_scopes(
              partition TEXT NOT NULL, tbl TEXT NOT NULL,
              var TEXT NOT NULL, value TEXT NOT NULL, row_id TEXT COLLATE "C" NOT NULL,
              PRIMARY KEY(partition, tbl, var, value, row_id)
            )""", """
            CREATE INDEX IF NOT EXISTS sync_row_scopes_by_row
              ON sync_row_scopes(partition, tbl, row_id)""", """
            CREATE TABLE IF NOT EXISTS sync_commits(
              partition TEXT NOT NULL, commit_seq BIGINT NOT NULL,
              client_id TEXT NOT NULL, client_commit_id TEXT NOT NULL,
              actor_id TEXT NOT NULL, created_at_ms BIGINT NOT NULL,
              writer_version BIGINT,
              PRIMARY KEY(partition, commit_seq)
            )""",
            // seeds/003: nullable on purpose; an old binary omits it and a default would let it pass the fence
            "ALTER TABLE sync_commits ADD COLUMN IF NOT EXISTS writer_version BIGINT", """
            CREATE INDEX IF NOT EXISTS sync_commits_by_time
              ON sync_commits(partition, created_at_ms)""", """
            CREATE TABLE IF NOT EXISTS sync_changes(
              partition TEXT NOT NULL, commit_seq BIGINT NOT NULL, idx INTEGER NOT NULL,
              tbl TEXT NOT NULL, row_id TEXT COLLATE "C" NOT NULL, op SMALLINT NOT NULL,
              row_version BIGINT, scopes JSONB NOT NULL, payload BYTEA,
              PRIMARY KEY(partition, commit_seq, idx)
            )""", """
            CREATE INDEX IF NOT EXISTS sync_changes_by_table
              ON sync_changes(partition, commit_seq, tbl, idx)""", """
            CREATE TABLE IF NOT EXISTS sync_change_scopes(
              partition TEXT NOT NULL, tbl TEXT NOT NULL,
              var TEXT NOT NULL, value TEXT NOT NULL, commit_seq BIGINT NOT NULL,
              PRIMARY KEY(partition, tbl, var, value, commit_seq)
            )""", """
            CREATE TABLE IF NOT EXISTS sync_push_results(
              partition TEXT NOT NULL, client_id TEXT NOT NULL,
              client_commit_id TEXT NOT NULL, result JSONB NOT NULL,
              PRIMARY KEY(partition, client_id, client_commit_id)
            )""", """
            CREATE TABLE IF NOT EXISTS sync_reactions(
              partition TEXT NOT NULL, idempotency_key TEXT NOT NULL,
              type TEXT NOT NULL, version INTEGER NOT NULL, payload JSONB NOT NULL,
              source_client_id TEXT NOT NULL, source_client_commit_id TEXT NOT NULL,
              source_commit_seq BIGINT NOT NULL, created_at_ms BIGINT NOT NULL,
              available_at_ms BIGINT NOT NULL, status TEXT NOT NULL,
              attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
              lease_owner TEXT, lease_expires_at_ms BIGINT, completed_at_ms BIGINT,
              last_failure JSONB,
              PRIMARY KEY(partition, idempotency_key),
              CHECK(status IN ('pending', 'leased', 'completed', 'dead-letter'))
            )""", """
            CREATE INDEX IF NOT EXISTS sync_reactions_due
              ON sync_reactions(partition, status, available_at_ms, created_at_ms, idempotency_key)""", """
            CREATE INDEX IF NOT EXISTS sync_reactions_lease
              ON sync_reactions(partition, status, lease_expires_at_ms)""", """
            CREATE INDEX IF NOT EXISTS sync_reactions_completed
              ON sync_reactions(partition, status, completed_at_ms, idempotency_key)""", """
            CREATE INDEX IF NOT EXISTS sync_reactions_dead_letter
              ON sync_reactions(partition, status, available_at_ms, idempotency_key)""", """
            CREATE TABLE IF NOT EXISTS sync_clients(
              partition TEXT NOT NULL, client_id TEXT NOT NULL, actor_id TEXT NOT NULL,
              wire_version INTEGER NOT NULL DEFAULT 1,
              cursor BIGINT NOT NULL, subscriptions JSONB NOT NULL,
              updated_at_ms BIGINT NOT NULL,
              PRIMARY KEY(partition, client_id)
            )""", """
            ALTER TABLE sync_clients
              ADD COLUMN IF NOT EXISTS wire_version INTEGER NOT NULL DEFAULT 1""", """
            CREATE TABLE IF NOT EXISTS sync_blob_refs(
              partition TEXT NOT NULL, tbl TEXT NOT NULL, row_id TEXT COLLATE "C" NOT NULL,
              blob_id TEXT NOT NULL,
              PRIMARY KEY(partition, tbl, row_id, blob_id)
            )""", """
            CREATE INDEX IF NOT EXISTS sync_blob_refs_by_blob
              ON sync_blob_refs(partition, blob_id)""",
            // every applied delete's tombstone (CommitLogSql.TOMBSTONES); wire-3 pushes read it (WIRE3-DELTA §4)
            """
            CREATE TABLE IF NOT EXISTS sync_tombstones(
              partition TEXT NOT NULL, tbl TEXT NOT NULL, row_id TEXT COLLATE "C" NOT NULL,
              commit_seq BIGINT NOT NULL,
              PRIMARY KEY(partition, tbl, row_id)
            )""", """
            CREATE TABLE IF NOT EXISTS sync_backfill_checkpoints(
              partition TEXT NOT NULL, name TEXT NOT NULL,
              schema_version INTEGER NOT NULL,
              state TEXT NOT NULL CHECK(state IN ('declared','backfilling','activated')),
              watermark BIGINT NOT NULL DEFAULT 0,
              owner_epoch BIGINT NOT NULL DEFAULT 0,
              observed_rows BIGINT NOT NULL DEFAULT 0,
              updated_at_ms BIGINT NOT NULL,
              PRIMARY KEY(partition, name)
            )""",
            // ours (issue 20): an operator's pause, null while the backfill runs
            "ALTER TABLE sync_backfill_checkpoints ADD COLUMN IF NOT EXISTS paused_at_ms BIGINT", """
            CREATE TABLE IF NOT EXISTS sync_writer_fence(
              partition TEXT PRIMARY KEY,
              required_writer_version INTEGER NOT NULL
            )""", """
            CREATE TABLE IF NOT EXISTS sync_schema_meta(
              id INTEGER PRIMARY KEY CHECK (id = 1),
              schema_version BIGINT NOT NULL,
              layouts TEXT NOT NULL DEFAULT '{}'
            )""",
            // ours: the layouts JSON keeps upstream's shape; primary keys ride beside it so a bump that changes a
            // table's key is refused (an upstream build ignores the extra column)
            "ALTER TABLE sync_schema_meta ADD COLUMN IF NOT EXISTS primary_keys TEXT NOT NULL DEFAULT '{}'");

    /**
     * The fence body (seeds/003 {@code syncular_writer_fence}). An absent fence row makes the EXISTS false, so a
     * partition with no barrier behaves exactly as before RFC 0007; a NULL writer_version (an old binary) fails.
     */
    static final String FENCE_FUNCTION_BODY = """

            BEGIN
              IF EXISTS (
                SELECT 1 FROM sync_writer_fence
                 WHERE partition = NEW.partition
                   AND (NEW.writer_version IS NULL
                        OR NEW.writer_version < required_writer_version)
              ) THEN
                RAISE EXCEPTION 'sync.storage.writer_fence_rejected';
              END IF;
              RETURN NEW;
            END;
            """;

    static final String CREATE_FENCE_FUNCTION = "CREATE OR REPLACE FUNCTION syncular_writer_fence()\n"
            + "RETURNS trigger AS $syncular_fence$" + FENCE_FUNCTION_BODY + "$syncular_fence$ LANGUAGE plpgsql";

    static final String DROP_FENCE_TRIGGER = "DROP TRIGGER IF EXISTS sync_commits_writer_fence ON sync_commits";

    static final String CREATE_FENCE_TRIGGER = """
            CREATE TRIGGER sync_commits_writer_fence
            BEFORE INSERT ON sync_commits
            FOR EACH ROW EXECUTE FUNCTION syncular_writer_fence()""";

    /** How many of {@link #TABLES} exist, whether the fence function body is current, whether the trigger exists. */
    static final String PROBE = """
            SELECT (SELECT count(*) FROM unnest(?::text[]) AS t(name) WHERE to_regclass(t.name) IS NOT NULL),
                   (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure('syncular_writer_fence()')),
                   EXISTS (SELECT 1 FROM pg_trigger g
                            WHERE g.tgname = 'sync_commits_writer_fence'
                              AND g.tgrelid = to_regclass('sync_commits') AND NOT g.tgisinternal),
                   EXISTS (SELECT 1 FROM pg_attribute a
                            WHERE a.attrelid = to_regclass('sync_schema_meta') AND a.attname = 'primary_keys'
                              AND NOT a.attisdropped),
                   EXISTS (SELECT 1 FROM pg_attribute a
                            WHERE a.attrelid = to_regclass('sync_commits') AND a.attname = 'writer_version'
                              AND NOT a.attisdropped)""";
}

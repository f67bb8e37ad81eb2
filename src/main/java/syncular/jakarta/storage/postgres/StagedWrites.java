package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.RowWrite;

/**
 * The writes a push group stages under the partition lock ({@link PostgresTransaction}'s class comment), kept so
 * that they travel as a few multi-row statements whose texts do not depend on how many commits the group has: per
 * table one upsert and one delete of the rows' final states (a row written twice in the group is written once, as
 * the later commit left it), then one append of every commit, its changes, change-scope entries and push results,
 * which also writes the partition head and queues one commit-feed notice. A text that varied with the group's size
 * would be parsed and planned afresh for every group. Not thread-safe.
 */
final class StagedWrites {
    /**
     * Every staged commit with its changes and scope-index entries, every staged push result, then the head and its
     * notice. Params: partition, writerVersion, seq[], clientId[], clientCommitId[], actorId[], createdAtMs[];
     * partition, seq[], idx[], tbl[], rowId[], op[], rowVersion[], scopes[], payload[]; partition, tbl[], var[],
     * value[], seq[]; partition, clientId[], clientCommitId[], result[]; head, partition; notice payload.
     */
    static final String APPEND_MANY = """
            WITH c AS (
              INSERT INTO sync_commits(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,
                                       writer_version)
              SELECT ?, u.seq, u.client_id, u.client_commit_id, u.actor_id, u.created_at_ms, ?
                FROM unnest(?::int8[], ?::text[], ?::text[], ?::text[], ?::int8[])
                     AS u(seq, client_id, client_commit_id, actor_id, created_at_ms)),
            ch AS (
              INSERT INTO sync_changes(partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload)
              SELECT ?, u.seq, u.idx, u.tbl, u.row_id, u.op, u.row_version, u.scopes::jsonb, u.payload
                FROM unnest(?::int8[], ?::int4[], ?::text[], ?::text[], ?::int2[], ?::int8[], ?::text[], ?::bytea[])
                     AS u(seq, idx, tbl, row_id, op, row_version, scopes, payload)
              RETURNING partition, commit_seq, idx, tbl, row_id, op, row_version),
            cs AS (
              INSERT INTO sync_change_scopes(partition, tbl, var, value, commit_seq)
              SELECT ?, v.tbl, v.var, v.value, v.seq FROM unnest(?::text[], ?::text[], ?::text[], ?::int8[])
                     AS v(tbl, var, value, seq)
              ON CONFLICT DO NOTHING),
            """ + CommitLogSql.TOMBSTONES + """
            ,
            pr AS (
              INSERT INTO sync_push_results(partition, client_id, client_commit_id, result)
              SELECT ?, r.client_id, r.client_commit_id, r.result::jsonb
                FROM unnest(?::text[], ?::text[], ?::text[]) AS r(client_id, client_commit_id, result)
              ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING),
            head AS (UPDATE sync_partitions SET max_commit_seq = ? WHERE partition = ?)
            SELECT pg_notify('""" + PostgresCommitFeed.CHANNEL + "', ?)";

    /**
     * Staged push results without a commit (every candidate rejected). Params: partition, clientId[],
     * clientCommitId[], result[].
     */
    static final String RESULTS_MANY = """
            INSERT INTO sync_push_results(partition, client_id, client_commit_id, result)
            SELECT ?, r.client_id, r.client_commit_id, r.result::jsonb
              FROM unnest(?::text[], ?::text[], ?::text[]) AS r(client_id, client_commit_id, result)
            ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING""";

    private record Commit(long seq, NewCommit commit) { }

    /** Final row states by table, then row id (insertion order kept, so statements and binds are deterministic). */
    private final Map<String, LinkedHashMap<String, RowWrite>> rows = new LinkedHashMap<>();
    private final List<Commit> commits = new ArrayList<>();
    private final List<String[]> results = new ArrayList<>();

    boolean isEmpty() { return rows.isEmpty() && commits.isEmpty() && results.isEmpty(); }

    void rows(List<RowWrite> writes) {
        for (RowWrite w : writes) {
            String id = w instanceof RowWrite.Upsert u ? u.row().rowId() : ((RowWrite.Delete) w).rowId();
            LinkedHashMap<String, RowWrite> table = rows.computeIfAbsent(w.table(), t -> new LinkedHashMap<>());
            table.remove(id);   // re-inserted last: the latest write of the row is its final state
            table.put(id, w);
        }
    }

    void commit(long seq, NewCommit commit) { commits.add(new Commit(seq, commit)); }

    void result(String clientId, String clientCommitId, String json) {
        results.add(new String[] {clientId, clientCommitId, json});
    }

    /** One round trip's worth: the statements' text, how to bind them, and how many result sets they return. */
    record Flush(String sql, Binder binder, int resultSets) { }

    @FunctionalInterface
    interface Binder {
        int bind(PreparedStatement ps, int from) throws SQLException;
    }

    /** What is staged as statements, then forgotten; {@code storage} knows the tables. */
    Flush drain(PostgresServerStorage storage, String partition, int writerVersion) {
        List<String> sql = new ArrayList<>();
        List<Binder> binders = new ArrayList<>();
        int resultSets = 0;
        for (TableWrites tw : byTable(storage, rows)) {
            RowTable t = tw.table();
            if (!tw.upserts().isEmpty()) {
                sql.add(t.upsertManySql);
                binders.add((ps, i) -> t.bindUpsertMany(ps, i, partition, tw.upserts()));
                resultSets++;
            }
            if (!tw.deletes().isEmpty()) {
                sql.add(t.deleteManySql);
                binders.add((ps, i) -> t.bindDeleteMany(ps, i, partition, tw.deletes()));
                resultSets++;
            }
        }
        if (!commits.isEmpty()) {
            sql.add(APPEND_MANY);
            binders.add(appendBinder(partition, writerVersion, List.copyOf(commits), List.copyOf(results)));
            resultSets++;
        } else if (!results.isEmpty()) {
            sql.add(RESULTS_MANY);
            List<String[]> staged = List.copyOf(results);
            binders.add((ps, i) -> bindResults(ps, i, partition, staged));
        }
        rows.clear();
        commits.clear();
        results.clear();
        return new Flush(String.join(";\n", sql), (ps, i) -> {
            for (Binder b : binders) i = b.bind(ps, i);
            return i;
        }, resultSets);
    }

    /** One table's final row states: the rows to upsert and the row ids to delete, each in the order given. */
    record TableWrites(RowTable table, List<syncular.jakarta.storage.StoredRow> upserts, List<String> deletes) { }

    /** {@code rows} (final states by table, then row id) split per table into upserts and deletes. */
    static List<TableWrites> byTable(PostgresServerStorage storage,
                                     Map<String, ? extends Map<String, RowWrite>> rows) {
        List<TableWrites> out = new ArrayList<>();
        for (Map.Entry<String, ? extends Map<String, RowWrite>> e : rows.entrySet()) {
            List<syncular.jakarta.storage.StoredRow> upserts = new ArrayList<>();
            List<String> deletes = new ArrayList<>();
            for (RowWrite w : e.getValue().values()) {
                if (w instanceof RowWrite.Upsert u) {
                    upserts.add(u.row());
                } else {
                    deletes.add(((RowWrite.Delete) w).rowId());
                }
            }
            out.add(new TableWrites(storage.table(e.getKey()), upserts, deletes));
        }
        return out;
    }

    private static Binder appendBinder(String partition, int writerVersion, List<Commit> commits,
                                       List<String[]> results) {
        return (ps, i) -> {
            Connection c = ps.getConnection();
            int n = commits.size();
            Long[] seq = new Long[n];
            String[] clientId = new String[n];
            String[] clientCommitId = new String[n];
            String[] actorId = new String[n];
            Long[] createdAt = new Long[n];
            ChangeArrays changes = new ChangeArrays();
            long head = 0;
            for (int k = 0; k < n; k++) {
                Commit staged = commits.get(k);
                NewCommit commit = staged.commit();
                seq[k] = staged.seq();
                head = Math.max(head, staged.seq());
                clientId[k] = commit.clientId();
                clientCommitId[k] = commit.clientCommitId();
                actorId[k] = commit.actorId();
                createdAt[k] = commit.createdAtMs();
                changes.add(staged.seq(), commit);
            }
            ps.setString(i++, partition);
            ps.setLong(i++, writerVersion);
            ps.setArray(i++, c.createArrayOf("int8", seq));
            ps.setArray(i++, c.createArrayOf("text", clientId));
            ps.setArray(i++, c.createArrayOf("text", clientCommitId));
            ps.setArray(i++, c.createArrayOf("text", actorId));
            ps.setArray(i++, c.createArrayOf("int8", createdAt));
            i = changes.bindChanges(ps, i, partition, true);
            i = changes.bindScopes(ps, i, partition, true);
            i = bindResults(ps, i, partition, results);
            ps.setLong(i++, head);
            ps.setString(i++, partition);
            ps.setString(i++, partition + ":" + head);
            return i;
        };
    }

    private static int bindResults(PreparedStatement ps, int i, String partition, List<String[]> results)
            throws SQLException {
        Connection c = ps.getConnection();
        String[] clientId = new String[results.size()];
        String[] clientCommitId = new String[results.size()];
        String[] json = new String[results.size()];
        for (int k = 0; k < results.size(); k++) {
            clientId[k] = results.get(k)[0];
            clientCommitId[k] = results.get(k)[1];
            json[k] = results.get(k)[2];
        }
        ps.setString(i++, partition);
        ps.setArray(i++, c.createArrayOf("text", clientId));
        ps.setArray(i++, c.createArrayOf("text", clientCommitId));
        ps.setArray(i++, c.createArrayOf("text", json));
        return i;
    }
}

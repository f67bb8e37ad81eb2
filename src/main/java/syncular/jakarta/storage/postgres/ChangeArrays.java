package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import syncular.jakarta.storage.NewCommit;
import syncular.jakarta.storage.StoredChange;

/**
 * The changes of one or more commits and their change-scope index entries as the column arrays an append binds
 * ({@link CommitLogSql#appendCommit} for one commit, {@link StagedWrites#APPEND_MANY} for a group, which also binds
 * each row's seq). Not thread-safe.
 */
final class ChangeArrays {
    private final List<Long> seq = new ArrayList<>();
    private final List<Integer> idx = new ArrayList<>();
    private final List<String> tbl = new ArrayList<>();
    private final List<String> rowId = new ArrayList<>();
    private final List<Short> op = new ArrayList<>();
    private final List<Long> rowVersion = new ArrayList<>();
    private final List<String> scopes = new ArrayList<>();
    private final List<byte[]> payload = new ArrayList<>();
    private final List<String> scopeTbl = new ArrayList<>();
    private final List<String> scopeVar = new ArrayList<>();
    private final List<String> scopeValue = new ArrayList<>();
    private final List<Long> scopeSeq = new ArrayList<>();

    /** Adds {@code commit}'s changes, numbered from 0, and its scope entries (one per table, var and value). */
    void add(long commitSeq, NewCommit commit) {
        // SPEC §3.1: the commit → scope inverted index; one entry per (table, var, value) of the commit
        Set<List<String>> entries = new LinkedHashSet<>();
        for (int x = 0; x < commit.changes().size(); x++) {
            StoredChange ch = commit.changes().get(x);
            seq.add(commitSeq);
            idx.add(x);
            tbl.add(ch.table());
            rowId.add(ch.rowId());
            op.add((short) ch.op().code());
            rowVersion.add(ch.rowVersion());
            scopes.add(StoredJson.scopes(ch.scopes()));
            payload.add(ch.payload());
            for (Map.Entry<String, String> e : ch.scopes().entrySet()) {
                entries.add(List.of(ch.table(), e.getKey(), e.getValue()));
            }
        }
        for (List<String> e : entries) {
            scopeTbl.add(e.get(0));
            scopeVar.add(e.get(1));
            scopeValue.add(e.get(2));
            scopeSeq.add(commitSeq);
        }
    }

    /** partition, [seq[],] idx[], tbl[], rowId[], op[], rowVersion[], scopes[], payload[]; returns the next index. */
    int bindChanges(PreparedStatement ps, int i, String partition, boolean withSeq) throws SQLException {
        Connection c = ps.getConnection();
        ps.setString(i++, partition);
        if (withSeq) ps.setArray(i++, c.createArrayOf("int8", seq.toArray()));
        ps.setArray(i++, c.createArrayOf("int4", idx.toArray()));
        ps.setArray(i++, c.createArrayOf("text", tbl.toArray()));
        ps.setArray(i++, c.createArrayOf("text", rowId.toArray()));
        ps.setArray(i++, c.createArrayOf("int2", op.toArray()));
        ps.setArray(i++, c.createArrayOf("int8", rowVersion.toArray()));
        ps.setArray(i++, c.createArrayOf("text", scopes.toArray()));
        ps.setArray(i++, c.createArrayOf("bytea", payload.toArray(new byte[0][])));
        return i;
    }

    /** partition, tbl[], var[], value[] [, seq[]]; returns the next index. */
    int bindScopes(PreparedStatement ps, int i, String partition, boolean withSeq) throws SQLException {
        Connection c = ps.getConnection();
        ps.setString(i++, partition);
        ps.setArray(i++, c.createArrayOf("text", scopeTbl.toArray()));
        ps.setArray(i++, c.createArrayOf("text", scopeVar.toArray()));
        ps.setArray(i++, c.createArrayOf("text", scopeValue.toArray()));
        if (withSeq) ps.setArray(i++, c.createArrayOf("int8", scopeSeq.toArray()));
        return i;
    }
}

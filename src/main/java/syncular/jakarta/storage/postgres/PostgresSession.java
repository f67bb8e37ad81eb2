package syncular.jakarta.storage.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import syncular.jakarta.storage.ClientRecord;
import syncular.jakarta.storage.CommitWindow;
import syncular.jakarta.storage.CommitWindowQuery;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.RequestEnd;
import syncular.jakarta.storage.RequestPreamble;
import syncular.jakarta.storage.RowScanQuery;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StoredRow;

/**
 * {@link StorageSession} on one connection of the DataSource, in autocommit. pgjdbc sends a multi-statement text as
 * one pipelined round trip, which PostgreSQL runs as one implicit transaction: the preamble's reads see its touch.
 *
 * <p>The pool validates a connection at most once per interval, not per checkout (issue 14), so a connection the
 * database has killed since (a restart, a fail-over, {@code pg_terminate_backend}) can be handed out: a round trip
 * that fails with the connection lost is aborted (so the pool drops it, JDBC 4.1 {@code Connection.abort}) and the
 * round trip is retried on a fresh connection, a bounded number of times. Every statement
 * of a session is a read or an idempotent upsert, so a retry after a statement that did reach the database writes
 * nothing twice.
 */
final class PostgresSession implements StorageSession {
    /** Fresh connections tried after a lost one; a pool of dead connections is evicted one failure at a time. */
    static final int CONNECTION_RETRIES = 4;

    /**
     * Client records and the log head in one statement (issue 15: a statement less in every pull's preamble, and one
     * statement for every socket attach that queued while another was read): a row per client id of the array, in its
     * order (the last column), the record's columns ({@code GET_CLIENT_RECORD}'s) null when the client has none, the
     * head's when the partition has no commit yet. Params: clientIds (text[]), partition, partition.
     */
    static final String CLIENT_RECORDS_AND_HEAD = """
            SELECT c.client_id, c.actor_id, c.wire_version, c.cursor, c.updated_at_ms, c.subscriptions,
                   p.max_commit_seq, p.horizon_seq, k.i
              FROM unnest(?::text[]) WITH ORDINALITY AS k(client_id, i)
              LEFT JOIN LATERAL (SELECT client_id, actor_id, wire_version, cursor, updated_at_ms,
                                        subscriptions::text AS subscriptions
                                   FROM sync_clients WHERE partition = ? AND client_id = k.client_id
                                 OFFSET 0) c ON TRUE
              LEFT JOIN sync_partitions p ON p.partition = ?
             ORDER BY k.i""";
    private static final String TOUCH_THEN_GATE = PostgresServerStorage.TOUCH_PARTITION + ";\n"
            + CommitLogSql.READ_SERVE_GATE;
    /** The preamble of a request that pushes: its log head comes from its push group's lock. */
    static final String PREAMBLE = TOUCH_THEN_GATE + ";\n" + PostgresServerStorage.GET_CLIENT_RECORD;
    static final String PREAMBLE_WITH_HEAD = TOUCH_THEN_GATE + ";\n" + CLIENT_RECORDS_AND_HEAD;
    static final String RECORD_THEN_GATE = PostgresServerStorage.PUT_CLIENT_RECORD + ";\n"
            + CommitLogSql.READ_SERVE_GATE;
    /**
     * Several requests' client records (zipped from arrays of equal length, one row per clientId: an upsert may not
     * touch a row twice), then the gate. Params: partition, clientIds[], actorIds[], wire versions[], cursors[],
     * subscriptions JSON[], activity times[], then the gate's.
     */
    static final String RECORDS_THEN_GATE = PostgresServerStorage.putClientRecord("""
            SELECT ?, u.client_id, u.actor_id, u.wire_version, u.cursor, u.subscriptions::jsonb, u.updated_at_ms
              FROM unnest(?::text[], ?::text[], ?::int[], ?::bigint[], ?::text[], ?::bigint[])
                   AS u(client_id, actor_id, wire_version, cursor, subscriptions, updated_at_ms)""")
            + ";\n" + CommitLogSql.READ_SERVE_GATE;

    private final PostgresServerStorage storage;
    private final DataSource dataSource;
    private final String partition;
    private Connection connection;
    /** The client record the preamble read: the request's own record write is compared with it. */
    private Optional<ClientRecord> stored = Optional.empty();

    PostgresSession(PostgresServerStorage storage, DataSource dataSource, String partition) {
        this.storage = storage;
        this.dataSource = dataSource;
        this.partition = partition;
    }

    @Override
    public String partition() { return partition; }

    @Override
    public RequestPreamble preamble(long authenticatedAtMs, String initialLogEpoch, int runningSchemaVersion,
                                    String clientId, boolean logHead) {
        if (logHead) {
            RequestPreamble read = preambles(authenticatedAtMs, initialLogEpoch, runningSchemaVersion,
                    List.of(clientId)).get(0);
            stored = read.clientRecord();
            return read;
        }
        return on(c -> {
            try (PreparedStatement ps = c.prepareStatement(PREAMBLE)) {
                int i = bindTouchThenGate(ps, authenticatedAtMs, initialLogEpoch, runningSchemaVersion);
                ps.setString(i++, partition);
                ps.setString(i++, clientId);
                PartitionRegistryEntry[] registry = new PartitionRegistryEntry[1];
                ServeGate[] gate = new ServeGate[1];
                @SuppressWarnings("unchecked")
                Optional<ClientRecord>[] record = new Optional[] {Optional.empty()};
                PostgresTransaction.resultSets(ps, (index, rs) -> {
                    switch (index) {
                        case 0 -> registry[0] = PostgresServerStorage.registryFrom(partition, rs);
                        case 1 -> gate[0] = PostgresServerStorage.serveGateFrom(rs);
                        default -> record[0] = PostgresServerStorage.clientRecordFrom(rs);
                    }
                });
                stored = record[0];
                return new RequestPreamble(registry[0], gate[0], runningSchemaVersion, record[0], 0, 0);
            }
        });
    }

    @Override
    public List<RequestPreamble> preambles(long authenticatedAtMs, String initialLogEpoch, int runningSchemaVersion,
                                           List<String> clientIds) {
        if (clientIds.isEmpty()) return List.of();
        return on(c -> {
            try (PreparedStatement ps = c.prepareStatement(PREAMBLE_WITH_HEAD)) {
                int i = bindTouchThenGate(ps, authenticatedAtMs, initialLogEpoch, runningSchemaVersion);
                TextArrays.bind(ps, i++, clientIds);
                ps.setString(i++, partition);
                ps.setString(i++, partition);
                PartitionRegistryEntry[] registry = new PartitionRegistryEntry[1];
                ServeGate[] gate = new ServeGate[1];
                List<RequestPreamble> read = new ArrayList<>(clientIds.size());
                PostgresTransaction.resultSets(ps, (index, rs) -> {
                    switch (index) {
                        case 0 -> registry[0] = PostgresServerStorage.registryFrom(partition, rs);
                        case 1 -> gate[0] = PostgresServerStorage.serveGateFrom(rs);
                        default -> {
                            while (rs.next()) {
                                // head 0 (NULL) before the partition's first commit
                                read.add(new RequestPreamble(registry[0], gate[0], runningSchemaVersion,
                                        PostgresServerStorage.clientRecordOf(rs), rs.getLong(7), rs.getLong(8)));
                            }
                        }
                    }
                });
                if (read.size() != clientIds.size()) {
                    throw new SQLException("the client-record read returned " + read.size() + " rows for "
                            + clientIds.size() + " clients");
                }
                return read;
            }
        });
    }

    /** The touch's and the gate read's parameters of a preamble; answers the next parameter index. */
    private int bindTouchThenGate(PreparedStatement ps, long authenticatedAtMs, String initialLogEpoch,
                                  int runningSchemaVersion) throws SQLException {
        int i = storage.bindTouch(ps, 1, partition, authenticatedAtMs, initialLogEpoch);
        ps.setString(i++, partition);
        ps.setInt(i++, runningSchemaVersion);
        return i;
    }

    @Override
    public RequestPreamble adopt(RequestPreamble earlier) {
        stored = earlier.clientRecord();
        return earlier;
    }

    @Override
    public CommitWindow readCommitWindow(CommitWindowQuery query, Optional<RequestEnd> end) {
        Optional<PostgresServerStorage.WindowEnd> riding = end.map(e -> new PostgresServerStorage.WindowEnd(
                recordToStore(Optional.of(e.recordIfComplete())),
                e.runningSchemaVersion()));
        return on(c -> PostgresServerStorage.readCommitWindowOn(c, partition, query, riding));
    }

    @Override
    public List<StoredRow> scanRows(RowScanQuery query) {
        RowTable t = storage.table(query.table());
        return on(c -> PostgresServerStorage.scanRowsOn(c, t, partition, query));
    }

    @Override
    public Optional<ClientRecord> recordToStore(Optional<ClientRecord> record) {
        return record.filter(r -> !storage.unchangedWithinTouchInterval(stored, r));
    }

    @Override
    public ServeGate recordClientsThenReadGate(List<ClientRecord> records, int runningSchemaVersion) {
        if (records.stream().map(ClientRecord::clientId).distinct().count() < records.size()) {
            throw new IllegalArgumentException("one record per clientId");
        }
        return on(c -> {
            if (records.isEmpty()) return PostgresServerStorage.readServeGateOn(c, partition, runningSchemaVersion);
            try (PreparedStatement ps = c.prepareStatement(records.size() == 1 ? RECORD_THEN_GATE
                    : RECORDS_THEN_GATE)) {
                int i = records.size() == 1 ? PostgresServerStorage.bindClientRecord(ps, 1, partition, records.get(0))
                        : bindClientRecords(ps, records);
                ps.setString(i++, partition);
                ps.setInt(i++, runningSchemaVersion);
                ServeGate[] gate = new ServeGate[1];
                PostgresTransaction.resultSets(ps, (index, rs) -> gate[0] = PostgresServerStorage.serveGateFrom(rs));
                if (gate[0] == null) throw new SQLException("the serve-gate read returned no rows");
                return gate[0];
            }
        });
    }

    private int bindClientRecords(PreparedStatement ps, List<ClientRecord> records) throws SQLException {
        int i = 1;
        ps.setString(i++, partition);
        TextArrays.bind(ps, i++, records.stream().map(ClientRecord::clientId).toList());
        TextArrays.bind(ps, i++, records.stream().map(ClientRecord::actorId).toList());
        TextArrays.bind(ps, i++, records.stream().map(r -> Integer.toString(r.wireVersion())).toList());
        TextArrays.bind(ps, i++, records.stream().map(r -> Long.toString(r.cursor())).toList());
        TextArrays.bind(ps, i++, records.stream().map(r -> StoredJson.subscriptions(r.subscriptions())).toList());
        TextArrays.bind(ps, i++, records.stream().map(r -> Long.toString(r.updatedAtMs())).toList());
        return i;
    }

    @Override
    public void release() {
        Connection c = connection;
        connection = null;
        if (c == null) return;
        try {
            c.close();
        } catch (SQLException ignored) {
            // the pool's business now; a broken connection is discarded by it
        }
    }

    /**
     * A checkout that failed within this long found a broken connection rather than waited for a free one: Payara's
     * pool, validating a connection the database killed, can fail that one checkout while it replaces the pool's
     * connections (ConnectionLossIT saw a 500 from it). A slower failure is a pool wait that timed out and is not
     * repeated, so an exhausted pool does not make a request wait several timeouts.
     */
    static final long FAST_CHECKOUT_FAILURE_NANOS = 1_000_000_000L;

    /** Runs {@code work} on the session's connection, taking one first if needed; see the class comment. */
    private <T> T on(PostgresServerStorage.SqlRead<T> work) {
        for (int attempt = 0; ; attempt++) {
            if (connection == null) {
                long started = System.nanoTime();
                try {
                    connection = dataSource.getConnection();
                } catch (SQLException e) {
                    if (attempt >= CONNECTION_RETRIES || System.nanoTime() - started > FAST_CHECKOUT_FAILURE_NANOS) {
                        throw PgErrors.classify(e);
                    }
                    continue;
                }
            }
            try {
                return work.run(connection);
            } catch (SQLException e) {
                StorageException classified = PgErrors.classify(e);
                if (classified.code() != StorageErrorCode.CONNECTION_LOST) throw classified;
                // the pool must not hand this one out again: abort marks it for removal (JDBC 4.1)
                PgErrors.abort(connection);
                connection = null;
                if (attempt >= CONNECTION_RETRIES) throw classified;
            }
        }
    }
}

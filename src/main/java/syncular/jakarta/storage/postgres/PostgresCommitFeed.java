package syncular.jakarta.storage.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import syncular.jakarta.storage.ChangeOp;
import syncular.jakarta.storage.CommitFeed;
import syncular.jakarta.storage.StoredChange;
import syncular.jakarta.storage.StoredCommit;

/**
 * The commit feed over PostgreSQL LISTEN/NOTIFY. Every transaction that appends issues {@code pg_notify(
 * 'syncular_commit', partition || ':' || seq)} inside itself, for each append or once for the highest seq of a push
 * group ({@link CommitLogSql#appendCommit}, {@code StagedWrites}); this listener holds ONE
 * dedicated connection of its own — never a pooled one, because a LISTEN ends when a pool hands the connection to
 * someone else and the pool's JTA enlistment has no business with a connection that lives forever — and polls it.
 *
 * <p>Positions: on (re)connect it LISTENs first, then reads {@code sync_partitions.max_commit_seq}: the first time to
 * learn where it starts, after a reconnect to report every commit it missed while it was away. A notice whose seq
 * jumps past the next expected one reports the gap first (seqs are dense per partition, CommitLogSql). So the
 * listener sees each seq once, ascending per partition, whatever the connection did.
 *
 * <p>{@link #run} is single-threaded by contract; positions are only touched there and by {@link #forgetPositions}.
 */
public final class PostgresCommitFeed implements CommitFeed {
    private static final System.Logger LOG = System.getLogger(PostgresCommitFeed.class.getName());
    /** The NOTIFY channel. */
    public static final String CHANNEL = "syncular_commit";

    static final String LISTEN = "LISTEN " + CHANNEL;
    static final String POSITIONS = "SELECT partition, max_commit_seq FROM sync_partitions";
    /** The notice suffix of a log-epoch rotation ({@code partition:rewound}); a seq is always digits. */
    static final String REWOUND = ":rewound";
    private static final String HEAD = "SELECT max_commit_seq FROM sync_partitions WHERE partition = ?";
    static final String READ_COMMIT = """
            SELECT c.created_at_ms, c.actor_id, ch.tbl, ch.row_id, ch.op, ch.row_version, ch.scopes::text, ch.payload,
                   (SELECT log_epoch FROM sync_partition_registry r WHERE r.partition = c.partition)
              FROM sync_commits c
              JOIN sync_changes ch ON ch.partition = c.partition AND ch.commit_seq = c.commit_seq
             WHERE c.partition = ? AND c.commit_seq = ?
             ORDER BY ch.idx""";

    /** Opens the dedicated listening connection (not from the container pool; see the class comment). */
    @FunctionalInterface
    public interface ListenConnections {
        Connection open() throws SQLException;
    }

    private final ListenConnections listenConnections;
    private final DataSource reads;
    private final int pollMs;
    private final long maxBackoffMs;
    private final Map<String, Long> positions = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile boolean listening;
    private volatile boolean forget;
    private volatile Connection current;

    /**
     * @param listenConnections the dedicated connection's source
     * @param reads             where commits are read (the ordinary pool; autocommit reads)
     * @param pollMs            how long one poll waits for a notice (also the close latency)
     * @param maxBackoffMs      the cap of the reconnect backoff
     */
    public PostgresCommitFeed(ListenConnections listenConnections, DataSource reads, int pollMs, long maxBackoffMs) {
        if (pollMs < 1) throw new IllegalArgumentException("pollMs must be >= 1");
        this.listenConnections = listenConnections;
        this.reads = reads;
        this.pollMs = pollMs;
        this.maxBackoffMs = maxBackoffMs;
    }

    @Override
    public void run(Listener listener) {
        long backoff = 100;
        boolean first = true;
        while (!closed) {
            try (Connection c = listenConnections.open()) {
                current = c;
                c.setAutoCommit(true);
                Notifications pg = Notifications.of(c);
                try (Statement s = c.createStatement()) {
                    s.execute(LISTEN);
                }
                // LISTEN before reading positions: a commit in between is both read and notified, and the
                // position check drops the duplicate
                catchUp(c, listener, first);
                first = false;
                listening = true;
                backoff = 100;
                if (!closed) LOG.log(Level.DEBUG, "commit feed listening on " + CHANNEL);
                while (!closed) {
                    List<String[]> notices = pg.poll(pollMs);
                    if (forget) {
                        forget = false;
                        positions.clear();
                    }
                    for (String[] n : notices) {
                        if (CHANNEL.equals(n[0])) notice(c, n[1], listener);
                    }
                }
            } catch (SQLException | RuntimeException e) {
                listening = false;
                if (closed) break;
                LOG.log(Level.WARNING, "commit feed connection lost ({0}); reconnecting in {1} ms", e.toString(), backoff);
                sleep(backoff);
                backoff = Math.min(backoff * 2, maxBackoffMs);
            } finally {
                listening = false;
                current = null;
            }
        }
    }

    private void catchUp(Connection c, Listener listener, boolean first) throws SQLException {
        Map<String, Long> maxima = new HashMap<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(POSITIONS)) {
            while (rs.next()) maxima.put(rs.getString(1), rs.getLong(2));
        }
        if (first || forget) {
            forget = false;
            positions.clear();
            positions.putAll(maxima);
            return;
        }
        for (Map.Entry<String, Long> e : maxima.entrySet()) advance(e.getKey(), e.getValue(), listener);
    }

    private void notice(Connection c, String payload, Listener listener) throws SQLException {
        if (payload != null && payload.endsWith(REWOUND) && payload.length() > REWOUND.length()) {
            rewound(c, payload.substring(0, payload.length() - REWOUND.length()), listener);
            return;
        }
        int colon = payload == null ? -1 : payload.lastIndexOf(':');   // a partition may itself contain ':'
        if (colon <= 0) return;
        long seq;
        try {
            seq = Long.parseLong(payload.substring(colon + 1));
        } catch (NumberFormatException e) {
            return;   // not ours: someone else NOTIFYing on the channel
        }
        advance(payload.substring(0, colon), seq, listener);
    }

    /** A rotated log epoch: the position restarts at the partition's current head, and the listener is told. */
    private void rewound(Connection c, String partition, Listener listener) throws SQLException {
        long head = 0;
        try (PreparedStatement ps = c.prepareStatement(HEAD)) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) head = rs.getLong(1);
            }
        }
        positions.put(partition, head);
        try {
            listener.rewound(partition);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "commit feed listener failed on the rewind of " + partition, e);
        }
    }

    /** Reports every seq above the partition's position through {@code seq}, then moves the position. */
    private void advance(String partition, long seq, Listener listener) {
        long last = positions.getOrDefault(partition, 0L);
        if (seq <= last) return;
        positions.put(partition, seq);
        if (seq - last > MAX_GAP_FILL) {
            listener.missed(partition, seq);
            return;
        }
        for (long s = last + 1; s <= seq; s++) {
            try {
                listener.committed(partition, s);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "commit feed listener failed on " + partition + ":" + s, e);
            }
        }
    }

    @Override
    public Optional<CommitRead> readCommit(String partition, long commitSeq) {
        try (Connection c = reads.getConnection(); PreparedStatement ps = c.prepareStatement(READ_COMMIT)) {
            ps.setString(1, partition);
            ps.setLong(2, commitSeq);
            long createdAt = 0;
            String actor = null;
            String epoch = null;
            List<StoredChange> changes = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    createdAt = rs.getLong(1);
                    actor = rs.getString(2);
                    epoch = rs.getString(9);
                    ChangeOp op = ChangeOp.forCode(rs.getShort(5));
                    Map<String, String> scopes = StoredJson.parseScopes(rs.getString(7));
                    changes.add(op == ChangeOp.UPSERT
                            ? StoredChange.upsert(rs.getString(3), rs.getString(4), rs.getLong(6), scopes, rs.getBytes(8))
                            : StoredChange.delete(rs.getString(3), rs.getString(4), scopes));
                }
            }
            return actor == null ? Optional.empty()
                    : Optional.of(new CommitRead(new StoredCommit(commitSeq, createdAt, actor, changes), epoch));
        } catch (SQLException e) {
            throw PgErrors.classify(e);
        }
    }

    @Override
    public void forgetPositions() { forget = true; }

    @Override
    public boolean listening() { return listening; }

    @Override
    public void close() {
        closed = true;
        Connection c = current;
        if (c != null) {
            try {
                c.close();   // wakes a poll blocked on the socket
            } catch (SQLException ignored) {
                // closing anyway
            }
        }
    }

    private void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    /**
     * The notifications of the LISTEN connection as (channel, payload) pairs. Normally the connection unwraps to the
     * WAR's own {@link PGConnection}. A container pool may hand out connections of the server's copy of the driver
     * (WildFly with PostgreSQL installed as a module, README option 2): same API, another class loader, so
     * {@code unwrap} cannot reach it. Then the pool's physical connection is found through the wrapper's public
     * accessor and {@code getNotifications} is called by reflection on the driver's own {@code PGConnection}
     * interface — the only place this feed needs driver API at all.
     */
    interface Notifications {
        List<String[]> poll(int timeoutMs) throws SQLException;

        static Notifications of(Connection c) throws SQLException {
            if (c.isWrapperFor(PGConnection.class)) {
                PGConnection pg = c.unwrap(PGConnection.class);
                return timeoutMs -> {
                    PGNotification[] notices = pg.getNotifications(timeoutMs);
                    List<String[]> out = new java.util.ArrayList<>(notices == null ? 0 : notices.length);
                    if (notices != null) {
                        for (PGNotification n : notices) out.add(new String[] {n.getName(), n.getParameter()});
                    }
                    return out;
                };
            }
            Object physical = physical(c);
            try {
                Class<?> api = Class.forName("org.postgresql.PGConnection", false,
                        physical.getClass().getClassLoader());
                if (!api.isInstance(physical)) throw new SQLException("the pool's connection is not a PostgreSQL one");
                java.lang.reflect.Method get = api.getMethod("getNotifications", int.class);
                Class<?> notice = Class.forName("org.postgresql.PGNotification", false, api.getClassLoader());
                java.lang.reflect.Method name = notice.getMethod("getName");
                java.lang.reflect.Method parameter = notice.getMethod("getParameter");
                return timeoutMs -> {
                    try {
                        Object[] notices = (Object[]) get.invoke(physical, timeoutMs);
                        List<String[]> out = new java.util.ArrayList<>(notices == null ? 0 : notices.length);
                        if (notices != null) {
                            for (Object n : notices) {
                                out.add(new String[] {(String) name.invoke(n), (String) parameter.invoke(n)});
                            }
                        }
                        return out;
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        if (e.getCause() instanceof SQLException sql) throw sql;
                        throw new SQLException("reading notifications failed", e.getCause());
                    } catch (IllegalAccessException e) {
                        throw new SQLException("reading notifications failed", e);
                    }
                };
            } catch (ReflectiveOperationException e) {
                throw new SQLException("the commit feed cannot read notifications from this pool's connections ("
                        + e + "); set syncular.db.url, syncular.db.user and syncular.db.password so it opens its own",
                        e);
            }
        }

        /** The driver's connection behind a pool wrapper (IronJacamar and Payara both expose a public accessor). */
        private static Object physical(Connection c) throws SQLException {
            for (String accessor : new String[] {"getUnderlyingConnection", "getConnection"}) {
                try {
                    Object inner = c.getClass().getMethod(accessor).invoke(c);
                    if (inner instanceof Connection && inner != c) return inner;
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // not this wrapper's accessor; try the next
                }
            }
            return c;
        }
    }
}

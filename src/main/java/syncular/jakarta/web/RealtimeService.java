package syncular.jakarta.web;

import jakarta.annotation.PreDestroy;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import syncular.jakarta.host.Credentials;
import syncular.jakarta.host.Identity;
import syncular.jakarta.realtime.RealtimeHub;
import syncular.jakarta.realtime.RealtimeSession;
import syncular.jakarta.realtime.RealtimeSettings;
import syncular.jakarta.realtime.SocketChannel;
import syncular.jakarta.storage.postgres.PostgresCommitFeed;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * Wires the realtime hub into the container: the commit feed's listening loop on a managed thread, socket rounds
 * on a pool of {@value #ROUND_THREADS} managed threads, a commit's deliveries beyond the first slice of sessions on a
 * pool of a managed thread per core, the §8.5 heartbeat on the managed scheduler. Started with the
 * first socket, so a server nobody connects to holds no extra connection.
 *
 * <p>The round pool's threads come from the container's managed thread factory, so a round runs with the
 * application's context; its tasks are not submitted to the managed executor because that captures the managed
 * context per task, which on Payara is a class-path scan behind a monitor per jar (docs/benchmarks.md, "Reconnect
 * storm"). The pool is bounded: at most {@value #ROUND_QUEUE} rounds wait, past that a socket's round closes it
 * 1013 (the hub's rule for a full executor).
 *
 * <p>The feed's dedicated connection: with {@code syncular.db.url} set it is a plain {@link PGSimpleDataSource}
 * built from {@code syncular.db.*}, outside every pool and transaction manager (a LISTEN must outlive any borrowing).
 * With only {@code syncular.datasource} (a container pool whose URL we do not know) one connection is taken from the
 * pool on the feed's thread (no transaction there) and kept for the feed's lifetime; the pool counts it as in use.
 */
@ApplicationScoped
public class RealtimeService {
    private static final System.Logger LOG = System.getLogger(RealtimeService.class.getName());
    /** How long one feed poll blocks (also how fast the feed notices close). */
    static final int FEED_POLL_MS = 500;

    @Inject
    SyncRuntime runtime;
    @Resource(lookup = "java:comp/DefaultManagedScheduledExecutorService")
    ManagedScheduledExecutorService scheduler;
    @Inject
    Telemetry telemetry;
    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    ManagedThreadFactory threads;

    /** Socket rounds that run at once: each holds one pooled connection while it runs (the pool's max is 32). */
    static final int ROUND_THREADS = 16;
    /** Socket rounds that may wait for a thread. */
    static final int ROUND_QUEUE = 10_000;
    /** Fanout slices that may wait for a thread (the feed delivers one commit at a time; a full queue, inline). */
    static final int FANOUT_QUEUE = 256;

    private RealtimeHub hub;
    private volatile ThreadPoolExecutor rounds;
    /** A commit's deliveries beside the feed's thread (RealtimeHub.FANOUT_SLICE sessions each): a thread a core. */
    private ThreadPoolExecutor fanout;
    private PostgresCommitFeed feed;
    private ScheduledFuture<?> heartbeat;
    private ScheduledFuture<?> sweep;
    /** How often the hub's limits pass runs (expiry, idle timeout, unfinished rounds, held-back acks). */
    static final long SWEEP_MS = 1_000;
    /** Conformance-host limits from the last reset; they outlive a hub that does not exist yet. */
    private Integer maxDeltaOverride;
    private Integer maxPresenceOverride;

    /** The hub, started on first use; empty while the server is not ready. */
    public synchronized Optional<RealtimeHub> hub() {
        if (hub != null) return Optional.of(hub);
        Optional<SyncRuntime.Parts> parts = runtime.parts();
        if (parts.isEmpty()) return Optional.empty();
        SyncularConfig config = parts.get().config();
        DataSource pool = parts.get().dataSource();
        feed = new PostgresCommitFeed(() -> listenConnection(config, pool), pool, FEED_POLL_MS,
                config.readinessRetryMaxMs());
        rounds = new ThreadPoolExecutor(ROUND_THREADS, ROUND_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(ROUND_QUEUE), threads);
        rounds.allowCoreThreadTimeOut(true);
        int cores = Runtime.getRuntime().availableProcessors();
        fanout = new ThreadPoolExecutor(cores, cores, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(FANOUT_QUEUE),
                threads);
        fanout.allowCoreThreadTimeOut(true);
        hub = new RealtimeHub(() -> runtime.parts().map(p -> new RealtimeHub.Context(p.storage(), p.handler(),
                p.schema(), p.resolver(), p.clock(), p.config().limits().maxRequestBytes(), runtime.events())), feed,
                rounds, fanout, effective(config.realtime()));
        PostgresCommitFeed started = feed;
        RealtimeHub listener = hub;
        io.micrometer.core.instrument.Gauge.builder("syncular.sockets.open", listener, RealtimeHub::openSockets)
                .description("realtime sockets open on this node").register(telemetry.meters());
        threads.newThread(() -> started.run(listener)).start();
        long beat = config.realtime().heartbeatMs();
        heartbeat = scheduler.scheduleAtFixedRate(listener::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
        sweep = scheduler.scheduleAtFixedRate(listener::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
        awaitListening(started);
        LOG.log(Level.INFO, "Syncular realtime started (commit feed on " + PostgresCommitFeed.CHANNEL + ")");
        return Optional.of(hub);
    }

    /**
     * Runs {@code task} on a thread of the round pool, or a thread of its own when the pool is full or not there:
     * a socket close the container reported from inside one of our calls into it (RealtimeEndpoint#closed).
     */
    public void later(Runnable task) {
        ThreadPoolExecutor pool = rounds;
        if (pool != null) {
            try {
                pool.execute(task);
                return;
            } catch (RejectedExecutionException full) {
                // below
            }
        }
        threads.newThread(task).start();
    }

    /** The hub if it has been started; never starts one (for timers that only notify connected sessions). */
    public synchronized Optional<RealtimeHub> runningHub() { return Optional.ofNullable(hub); }

    /** The realtime limits in force (the configured ones until the hub exists). */
    public RealtimeSettings settings() {
        synchronized (this) {
            if (hub != null) return hub.settings();
        }
        return runtime.parts().map(p -> p.config().realtime()).orElse(RealtimeSettings.DEFAULTS);
    }

    /** Where an upgrade may carry its bearer token ({@code syncular.auth.websocket-token}). */
    public java.util.Set<SyncularConfig.WebSocketToken> tokenCarriers() {
        return runtime.parts().map(p -> p.config().auth().websocketToken())
                .orElse(SyncularConfig.WebSocketToken.DEFAULTS);
    }

    /** §8.1: authenticates through the one {@link syncular.jakarta.host.Authenticator} and registers the socket. */
    public RealtimeSession connect(Credentials credentials, String clientId, SocketChannel channel) {
        SyncRuntime.Parts parts = runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
        Identity identity = runtime.authenticate(parts, credentials, "socket");
        RealtimeHub h = hub().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
        return h.connect(identity, clientId, channel);
    }

    /** Conformance reset: every socket closed, presence dropped, feed positions forgotten, limits replaced. */
    public synchronized void reset(Integer maxDeltaBytes, Integer maxPresenceBytes) {
        maxDeltaOverride = maxDeltaBytes;
        maxPresenceOverride = maxPresenceBytes;
        if (hub == null) return;
        hub.closeAll(1012, "reset");
        feed.forgetPositions();
        hub.settings(effective(runtime.parts().map(p -> p.config().realtime()).orElse(RealtimeSettings.DEFAULTS)));
    }

    private RealtimeSettings effective(RealtimeSettings configured) {
        RealtimeSettings s = configured;
        if (maxDeltaOverride != null) s = s.withMaxDeltaBytes(maxDeltaOverride);
        if (maxPresenceOverride != null) s = s.withMaxPresenceBytes(maxPresenceOverride);
        return s;
    }

    /** Whether the commit feed's connection is up (tests and diagnostics). */
    public synchronized boolean listening() { return feed != null && feed.listening(); }

    @PreDestroy
    synchronized void stop() {
        if (heartbeat != null) heartbeat.cancel(false);
        if (sweep != null) sweep.cancel(false);
        if (hub != null) hub.closeAll(1001, "server shutting down");
        if (feed != null) feed.close();
        if (rounds != null) rounds.shutdownNow();
        if (fanout != null) fanout.shutdownNow();
    }

    private static Connection listenConnection(SyncularConfig config, DataSource pool) throws java.sql.SQLException {
        if (config.dbUrl().isPresent()) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(config.dbUrl().get());
            ds.setUser(config.dbUser().orElse(null));
            ds.setPassword(config.dbPassword().orElse(""));
            ds.setApplicationName("syncular-commit-feed");
            ds.setConnectTimeout(5);
            ds.setTcpKeepAlive(true);
            return ds.getConnection();
        }
        return pool.getConnection();
    }

    private static void awaitListening(PostgresCommitFeed feed) {
        // the first socket's hello reads latestCursor; fanout must already be listening then (bounded wait)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!feed.listening() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}

package syncular.jakarta.web;

import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.annotation.WebListener;
import java.lang.System.Logger.Level;
import java.lang.reflect.Field;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * Gives the container's WebSocket sessions a plain scheduler for their idle-timeout task, where the container is
 * Tyrus (Payara). Tyrus re-schedules that task on <em>every</em> frame a session receives or sends, at open and at
 * every {@code setMaxIdleTimeout} — even with the timeout off, as ours is (the hub keeps its own, counting pongs).
 * It schedules on the managed scheduled executor it looked up at start, and Payara captures the managed context for
 * each such task with a {@code ServiceLoader} over the thread's context class loader: a scan of every jar of the
 * server behind a monitor per jar. Under a reconnect storm the request threads spend their time queued on those
 * monitors (docs/benchmarks.md, "Reconnect storm"). The task itself is Tyrus' own and needs no application context,
 * so its scheduler need not be a managed one.
 *
 * <p>At start this swaps the scheduler the Tyrus container hands its sessions for one of ours (one thread from the
 * container's managed thread factory, cancelled tasks removed at once); at stop it puts the container's back and
 * shuts ours down. Ours drops the idle-timeout tasks of sessions whose timeout is off: Tyrus schedules them with the
 * timeout as the delay, 0, and such a task does nothing when it runs; scheduled, each one woke the scheduler's thread,
 * once per frame sent or received: 10,000 wake-ups a second for ten commits a second to 1,000 sockets
 * (docs/benchmarks.md, "Fanout"). The swap is by reflection on one field, so nothing here depends on Tyrus at
 * compile time; on another container (WildFly's Undertow) or a Tyrus without that field it does nothing and says so
 * in the log.
 */
@WebListener
public class WebSocketTimeouts implements ServletContextListener {
    private static final System.Logger LOG = System.getLogger(WebSocketTimeouts.class.getName());
    static final String SERVER_CONTAINER = "jakarta.websocket.server.ServerContainer";
    /** Tyrus' {@code BaseContainer}: the class holding the field its sessions read their scheduler from. */
    static final String TYRUS_CONTAINER = "org.glassfish.tyrus.core.BaseContainer";
    static final String TYRUS_FIELD = "managedScheduledExecutorService";

    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    ManagedThreadFactory threads;

    private Field field;
    private Object container;
    private Object original;
    private ScheduledThreadPoolExecutor ours;

    @Override
    public void contextInitialized(ServletContextEvent event) {
        Object websocket = event.getServletContext().getAttribute(SERVER_CONTAINER);
        Field f = websocket == null ? null : schedulerField(websocket.getClass());
        if (f == null) {
            LOG.log(Level.DEBUG, () -> "WebSocket container " + (websocket == null ? "absent" : websocket.getClass())
                    + ": its idle-timeout scheduling is left as it is");
            return;
        }
        ScheduledThreadPoolExecutor scheduler = new Scheduler(threads);
        try {
            f.setAccessible(true);
            Object before = f.get(websocket);
            if (!(before instanceof ScheduledExecutorService)) {
                scheduler.shutdownNow();
                LOG.log(Level.DEBUG, "Tyrus has no managed scheduler to replace: left as it is");
                return;
            }
            f.set(websocket, scheduler);
            field = f;
            container = websocket;
            original = before;
            ours = scheduler;
            LOG.log(Level.INFO, "Tyrus WebSocket sessions schedule their idle-timeout task on a plain scheduler");
        } catch (ReflectiveOperationException | RuntimeException e) {
            scheduler.shutdownNow();
            LOG.log(Level.WARNING, "Tyrus' idle-timeout scheduler could not be replaced; realtime throughput on "
                    + "this server is bounded by its managed-context capture (" + e + ")");
        }
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        if (ours == null) return;
        try {
            field.set(container, original);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.DEBUG, "restoring Tyrus' scheduler failed", e);
        }
        ours.shutdownNow();
    }

    /** Tyrus' task that closes a session idle for its max idle timeout; a no-op when that timeout is off (≤ 0). */
    static final String TYRUS_IDLE_TIMEOUT_TASK = "org.glassfish.tyrus.core.TyrusSession$IdleTimeoutCommand";

    /**
     * The sessions' scheduler: one thread, cancelled tasks removed at once, and an idle-timeout task scheduled with
     * no delay (its session's timeout is the delay, so the timeout is off) not scheduled at all.
     */
    static final class Scheduler extends ScheduledThreadPoolExecutor {
        Scheduler(ThreadFactory threads) {
            super(1, threads);
            setRemoveOnCancelPolicy(true);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            if (delay <= 0 && command != null && command.getClass().getName().equals(TYRUS_IDLE_TIMEOUT_TASK)) {
                return NOTHING_SCHEDULED;
            }
            return super.schedule(command, delay, unit);
        }
    }

    /** What an idle-timeout task with its timeout off gets instead of a schedule: done, nothing to cancel. */
    static final ScheduledFuture<Object> NOTHING_SCHEDULED = new NothingScheduled();

    private static final class NothingScheduled implements ScheduledFuture<Object> {
        @Override public long getDelay(TimeUnit unit) { return 0; }
        @Override public int compareTo(Delayed o) {
            return Long.compare(0, o.getDelay(TimeUnit.NANOSECONDS));
        }
        @Override public boolean cancel(boolean mayInterruptIfRunning) { return false; }
        @Override public boolean isCancelled() { return false; }
        @Override public boolean isDone() { return true; }
        @Override public Object get() { return null; }
        @Override public Object get(long timeout, TimeUnit unit) { return null; }
    }

    /** Tyrus' scheduler field, when {@code type} is (a subclass of) Tyrus' container; else null. */
    static Field schedulerField(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (!c.getName().equals(TYRUS_CONTAINER)) continue;
            try {
                Field f = c.getDeclaredField(TYRUS_FIELD);
                return ScheduledExecutorService.class.isAssignableFrom(f.getType()) ? f : null;
            } catch (NoSuchFieldException e) {
                return null;
            }
        }
        return null;
    }
}

package syncular.jakarta.web;

import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.annotation.WebListener;
import java.lang.System.Logger.Level;
import java.lang.reflect.Field;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

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
 * shuts ours down. The swap is by reflection on one field, so nothing here depends on Tyrus at compile time; on
 * another container (WildFly's Undertow) or a Tyrus without that field it does nothing and says so in the log.
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
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, threads);
        scheduler.setRemoveOnCancelPolicy(true);
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

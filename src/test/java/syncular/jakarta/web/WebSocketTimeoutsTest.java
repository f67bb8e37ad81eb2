package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.websocket.ClientEndpointConfig;
import jakarta.websocket.Endpoint;
import jakarta.websocket.Extension;
import jakarta.websocket.Session;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.glassfish.tyrus.core.BaseContainer;
import org.junit.jupiter.api.Test;

/**
 * {@link WebSocketTimeouts} against the real Tyrus container class (the version Payara ships): while the application
 * runs, {@code getScheduledExecutorService()} — what every Tyrus session reads its idle-timeout scheduler from —
 * answers a plain scheduler on the container's managed thread factory instead of the managed executor; at stop the
 * container has its own back. A container that is not Tyrus is left alone.
 */
class WebSocketTimeoutsTest {
    /** Tyrus' container as Payara's servlet integration builds it, minus the parts no test here reaches. */
    static final class TyrusContainer extends BaseContainer {
        @Override public long getDefaultAsyncSendTimeout() { return 0; }
        @Override public void setAsyncSendTimeout(long timeoutMs) { }
        @Override public Session connectToServer(Object endpoint, URI path) { throw new UnsupportedOperationException(); }
        @Override public Session connectToServer(Class<?> endpoint, URI path) { throw new UnsupportedOperationException(); }
        @Override public Session connectToServer(Endpoint endpoint, ClientEndpointConfig config, URI path) {
            throw new UnsupportedOperationException();
        }
        @Override public Session connectToServer(Class<? extends Endpoint> endpoint, ClientEndpointConfig config,
                                                 URI path) {
            throw new UnsupportedOperationException();
        }
        @Override public long getDefaultMaxSessionIdleTimeout() { return 0; }
        @Override public void setDefaultMaxSessionIdleTimeout(long timeout) { }
        @Override public int getDefaultMaxBinaryMessageBufferSize() { return 0; }
        @Override public void setDefaultMaxBinaryMessageBufferSize(int max) { }
        @Override public int getDefaultMaxTextMessageBufferSize() { return 0; }
        @Override public void setDefaultMaxTextMessageBufferSize(int max) { }
        @Override public Set<Extension> getInstalledExtensions() { return Set.of(); }
    }

    /** The container's managed thread factory: threads named so the test can tell them. */
    static final ManagedThreadFactory THREADS = new ManagedThreadFactory() {
        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "managed-factory-thread");
            t.setDaemon(true);
            return t;
        }

        @Override
        public ForkJoinWorkerThread newThread(ForkJoinPool pool) { throw new UnsupportedOperationException(); }
    };

    private static ServletContextEvent started(Object websocketContainer) {
        ServletContext context = (ServletContext) Proxy.newProxyInstance(ServletContext.class.getClassLoader(),
                new Class<?>[] {ServletContext.class}, (proxy, method, args) ->
                        method.getName().equals("getAttribute") && WebSocketTimeouts.SERVER_CONTAINER.equals(args[0])
                                ? websocketContainer : null);
        return new ServletContextEvent(context);
    }

    @Test
    void tyrusSessionsScheduleOnAPlainSchedulerWhileTheApplicationRuns() throws Exception {
        TyrusContainer container = new TyrusContainer();
        // what Payara's container looked up at start (outside a server the JNDI lookup finds nothing)
        ScheduledExecutorService managed = Executors.newSingleThreadScheduledExecutor();
        Field field = BaseContainer.class.getDeclaredField(WebSocketTimeouts.TYRUS_FIELD);
        field.setAccessible(true);
        field.set(container, managed);
        assertSame(managed, container.getScheduledExecutorService());

        WebSocketTimeouts timeouts = new WebSocketTimeouts();
        timeouts.threads = THREADS;
        ServletContextEvent event = started(container);
        timeouts.contextInitialized(event);
        ScheduledExecutorService ours = container.getScheduledExecutorService();
        assertNotSame(managed, ours, "sessions get the plain scheduler");
        assertEquals("managed-factory-thread", ours.schedule(() -> Thread.currentThread().getName(), 0,
                TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS), "on a thread of the managed factory");

        timeouts.contextDestroyed(event);
        assertSame(managed, container.getScheduledExecutorService(), "the container's own is back");
        assertTrue(ours.isShutdown());
        assertTrue(!managed.isShutdown(), "the container's is not ours to stop");
        managed.shutdownNow();
    }

    @Test
    void anIdleTimeoutTaskWithItsTimeoutOffIsNotScheduledAndEveryOtherTaskIs() throws Exception {
        // Tyrus' own task, as a session with its timeout off schedules it: the timeout (0) as the delay
        java.lang.reflect.Constructor<?> constructor = Class.forName(WebSocketTimeouts.TYRUS_IDLE_TIMEOUT_TASK)
                .getDeclaredConstructor(org.glassfish.tyrus.core.TyrusSession.class);
        constructor.setAccessible(true);
        Runnable idle = (Runnable) constructor.newInstance((Object) null);
        WebSocketTimeouts.Scheduler scheduler = new WebSocketTimeouts.Scheduler(THREADS);
        try {
            java.util.concurrent.ScheduledFuture<?> off = scheduler.schedule(idle, 0, TimeUnit.MILLISECONDS);
            assertTrue(off.isDone() && !off.isCancelled());
            assertTrue(!off.cancel(true), "nothing to cancel");
            assertEquals(0, scheduler.getTaskCount(), "nothing queued, nothing run");

            java.util.concurrent.ScheduledFuture<?> on = scheduler.schedule(idle, 60_000, TimeUnit.MILLISECONDS);
            assertEquals(1, scheduler.getQueue().size(), "a timeout that is on is scheduled");
            on.cancel(false);
            assertEquals(0, scheduler.getQueue().size(), "and removed when cancelled");

            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
            scheduler.schedule(() -> ran.set(true), 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
            assertTrue(ran.get(), "any other task without a delay runs");
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void anotherContainerOrNoneIsLeftAsItIs() {
        WebSocketTimeouts timeouts = new WebSocketTimeouts();
        timeouts.threads = THREADS;
        Object undertow = new Object();
        timeouts.contextInitialized(started(undertow));
        timeouts.contextDestroyed(started(undertow));
        timeouts.contextInitialized(started(null));
        timeouts.contextDestroyed(started(null));
        // a Tyrus container without a managed scheduler (Tyrus makes its own plain one): nothing to replace
        TyrusContainer plain = new TyrusContainer();
        timeouts.contextInitialized(started(plain));
        ScheduledExecutorService own = plain.getScheduledExecutorService();
        assertSame(own, plain.getScheduledExecutorService());
        timeouts.contextDestroyed(started(plain));
        assertTrue(!own.isShutdown(), "Tyrus' own scheduler is Tyrus' to stop");
        plain.shutdown();
    }
}

package syncular.jakarta.sync;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageSession;

/**
 * The real storage with hooks around one of its methods: the points a concurrent writer races (a prune between two
 * reads of a request) or a count of the calls a request makes. Everything else goes straight through.
 */
final class StorageHooks {
    private StorageHooks() { }

    /**
     * {@code before} runs in front of, and {@code after} behind, every call of {@code method} on {@code real} and on
     * the sessions it opens.
     */
    static ServerStorage around(ServerStorage real, String method, Runnable before, Runnable after) {
        return hooked(ServerStorage.class, real, method, before, after);
    }

    @SuppressWarnings("unchecked")
    private static <T> T hooked(Class<T> type, T real, String method, Runnable before, Runnable after) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            boolean hooked = m.getName().equals(method);
            if (hooked) before.run();
            Object result;
            try {
                result = m.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (hooked) after.run();
            if (result instanceof StorageSession session) {
                return hooked(StorageSession.class, session, method, before, after);
            }
            return result;
        });
    }

    /** Runs the hook a test left in {@code slot}, once. */
    static Runnable once(java.util.concurrent.atomic.AtomicReference<Runnable> slot) {
        return () -> {
            Runnable r = slot.getAndSet(null);
            if (r != null) r.run();
        };
    }
}

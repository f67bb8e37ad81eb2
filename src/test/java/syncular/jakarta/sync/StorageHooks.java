package syncular.jakarta.sync;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.function.UnaryOperator;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageSession;
import syncular.jakarta.storage.StorageTransaction;

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
            Object result = invoke(real, m, args);
            if (hooked) after.run();
            if (result instanceof StorageSession session) {
                return hooked(StorageSession.class, session, method, before, after);
            }
            return result;
        });
    }

    /**
     * The real storage, with each transaction it runs (for the push path) passed through {@code wrap} first: the
     * seam for a fault or a rewritten value inside a push.
     */
    static ServerStorage transactionsThrough(ServerStorage real, UnaryOperator<StorageTransaction> wrap) {
        return (ServerStorage) Proxy.newProxyInstance(ServerStorage.class.getClassLoader(),
                new Class<?>[] {ServerStorage.class}, (proxy, m, args) -> {
                    if (m.getName().equals("inTransaction")) {
                        ServerStorage.TransactionWork<?> work = (ServerStorage.TransactionWork<?>) args[1];
                        return real.inTransaction((String) args[0], tx -> work.run(wrap.apply(tx)));
                    }
                    return invoke(real, m, args);
                });
    }

    /** What a hooked transaction sees of each call before it goes through; it may rewrite {@code args} or throw. */
    @FunctionalInterface
    interface Call {
        void before(String method, Object[] args);
    }

    /** {@code tx} with {@code call} in front of each of its methods. */
    static StorageTransaction calls(StorageTransaction tx, Call call) {
        return (StorageTransaction) Proxy.newProxyInstance(StorageTransaction.class.getClassLoader(),
                new Class<?>[] {StorageTransaction.class}, (proxy, m, args) -> {
                    call.before(m.getName(), args);
                    return invoke(tx, m, args);
                });
    }

    /** Calls {@code m} on {@code target}, rethrowing what the method itself threw. */
    static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Runs the hook a test left in {@code slot}, once. */
    static Runnable once(java.util.concurrent.atomic.AtomicReference<Runnable> slot) {
        return () -> {
            Runnable r = slot.getAndSet(null);
            if (r != null) r.run();
        };
    }
}

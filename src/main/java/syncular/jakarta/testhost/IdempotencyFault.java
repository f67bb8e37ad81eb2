package syncular.jakarta.testhost;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import syncular.jakarta.storage.PushKey;
import syncular.jakarta.storage.PushPreamble;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredPushResult;

/**
 * The catalog's {@code idempotency-fault} (upstream {@code failNextIdempotencyLookup}, SPEC §6.3): once armed, the
 * next idempotency lookup of a push finds its stored result unreadable, as a corrupt record would read, whether or
 * not one exists. The fault sits at the storage seam, around the storage the sync handler uses: the handler is never
 * told a fault happened and answers as it does for a real unreadable record. Only the conformance host wraps storage
 * this way.
 */
final class IdempotencyFault {
    private final AtomicBoolean armed = new AtomicBoolean();

    void arm() { armed.set(true); }

    void disarm() { armed.set(false); }

    /**
     * {@code storage}, with every push transaction's lock-and-lookup passing through the fault: the units it runs on
     * a transaction of its own ({@code inTransaction}) and on the container's ({@code runUnit}).
     */
    ServerStorage around(ServerStorage storage) {
        return proxy(ServerStorage.class, storage, (method, args) -> {
            boolean unit = method.getName().equals("inTransaction") || method.getName().equals("runUnit");
            if (unit && args[args.length - 1] instanceof ServerStorage.TransactionWork<?> work) {
                Object[] faulty = args.clone();
                faulty[args.length - 1] = (ServerStorage.TransactionWork<Object>) tx -> work.run(around(tx));
                return method.invoke(storage, faulty);
            }
            return method.invoke(storage, args);
        });
    }

    private StorageTransaction around(StorageTransaction tx) {
        return proxy(StorageTransaction.class, tx, (method, args) -> {
            Object result = method.invoke(tx, args);
            if (method.getName().equals("lockForPush") && result instanceof PushPreamble pre
                    && args[1] instanceof Collection<?> commits && !commits.isEmpty() && armed.getAndSet(false)) {
                // one lookup fails: the group's first commit, as the reference fails one getPushResult call
                PushKey first = (PushKey) new ArrayList<>(commits).get(0);
                Map<PushKey, StoredPushResult> existing = new HashMap<>(pre.existing());
                existing.remove(first);
                Set<PushKey> unreadable = new HashSet<>(pre.unreadable());
                unreadable.add(first);
                return new PushPreamble(pre.gate(), existing, unreadable, pre.rows(), pre.tombstones(), pre.maxCommitSeq(),
                        pre.horizonSeq());
            }
            return result;
        });
    }

    private interface Call {
        Object invoke(Method method, Object[] args) throws ReflectiveOperationException;
    }

    private static <T> T proxy(Class<T> type, T target, Call call) {
        InvocationHandler h = (self, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> self == args[0];
                    case "hashCode" -> System.identityHashCode(self);
                    default -> "faulty " + target;
                };
            }
            try {
                return call.invoke(method, args == null ? new Object[0] : args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
    }
}

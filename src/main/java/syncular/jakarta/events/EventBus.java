package syncular.jakarta.events;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A node's events: every emitted event goes into the {@link EventRing} and to each listener (the metrics, the live
 * tails of the console), in the emitting thread. A listener that throws is logged once and never reaches the
 * emitter; a listener must not block (a live tail queues and drops, see its own class).
 */
public final class EventBus implements ServerEvents {
    private static final System.Logger LOG = System.getLogger(EventBus.class.getName());

    private final EventRing ring;
    private final List<Consumer<EventRing.Sequenced>> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean warned;

    public EventBus(int capacity) { this.ring = new EventRing(capacity); }

    public EventRing ring() { return ring; }

    @Override
    public void emit(ServerEvent event) {
        EventRing.Sequenced s = ring.append(event);
        for (Consumer<EventRing.Sequenced> l : listeners) {
            try {
                l.accept(s);
            } catch (RuntimeException e) {
                if (!warned) {
                    warned = true;
                    LOG.log(System.Logger.Level.WARNING, "an event listener failed (logged once)", e);
                }
            }
        }
    }

    /** Adds a listener for events emitted from now on; answers what removes it. */
    public Runnable listen(Consumer<EventRing.Sequenced> listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }
}

package syncular.jakarta.events;

/**
 * Where an emitter sends its {@link ServerEvent}s. Fire-and-forget by contract: {@link #emit} never throws and never
 * blocks on a consumer, so a broken tail or metrics pipeline cannot fail a push.
 */
@FunctionalInterface
public interface ServerEvents {
    /** Events go nowhere (unit tests of a layer that emits, and the parts built before the bus). */
    ServerEvents NONE = e -> { };

    void emit(ServerEvent event);
}

package syncular.jakarta.host;

/** Every time the server reads goes through here, so tests and the conformance host can move time virtually. */
@FunctionalInterface
public interface Clock {
    long nowMs();

    Clock SYSTEM = System::currentTimeMillis;
}

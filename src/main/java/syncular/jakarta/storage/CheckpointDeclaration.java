package syncular.jakarta.storage;

import java.util.Objects;

/**
 * A checkpoint this process declares (seeds/001 {@code CheckpointDeclaration}): installed by the migration that
 * bumps to {@code schemaVersion}, and the names this process may serve past while they are pending.
 */
public record CheckpointDeclaration(String partition, String name, int schemaVersion) {
    public CheckpointDeclaration {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(name, "name");
    }
}

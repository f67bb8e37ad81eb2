package syncular.jakarta.console;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;

/** A client's record ({@code sync_clients}, SPEC §1.5): its actor, cursor, wire version and subscriptions. */
@Entity
@Table(name = "sync_clients")
@IdClass(ClientEntry.Key.class)
public class ClientEntry {
    @Id
    @Column(name = "partition")
    private String partition;
    @Id
    @Column(name = "client_id")
    private String clientId;
    @Column(name = "actor_id")
    private String actorId;
    @Column(name = "wire_version")
    private int wireVersion;
    @Column(name = "cursor")
    private long cursor;
    /** The subscription list as the JSON the storage keeps (read as text). */
    @Column(name = "subscriptions")
    private String subscriptions;
    @Column(name = "updated_at_ms")
    private long updatedAtMs;

    public String partition() { return partition; }

    public String clientId() { return clientId; }

    public String actorId() { return actorId; }

    public int wireVersion() { return wireVersion; }

    public long cursor() { return cursor; }

    public String subscriptions() { return subscriptions; }

    public long updatedAtMs() { return updatedAtMs; }

    /** The composite key (partition, client_id). */
    public static class Key implements Serializable {
        private String partition;
        private String clientId;

        public Key() { }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(partition, k.partition) && Objects.equals(clientId, k.clientId);
        }

        @Override
        public int hashCode() { return Objects.hash(partition, clientId); }
    }
}

package syncular.jakarta.storage;

import java.util.List;

/**
 * Per (partition, client) record (SPEC §4.5, §8.1): the minimum next cursor over the last pull's active
 * subscriptions, the subscription list and the wire version last accepted from the client (WIRE3-DELTA §8.6).
 */
public record ClientRecord(String clientId, String actorId, int wireVersion, long cursor, long updatedAtMs,
                           List<ClientSubscription> subscriptions) {
    public ClientRecord {
        subscriptions = List.copyOf(subscriptions);
    }
}

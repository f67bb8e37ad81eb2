package syncular.jakarta.wire;

import java.util.List;
import java.util.Map;

/**
 * SUBSCRIPTION (0x04), after PULL_HEADER (SPEC §4.3). {@code paramsJson} and {@code bootstrapStateJson} are raw
 * JSON texts kept byte for byte ({@code null} = absent); {@code cursor} −1 means never synced.
 */
public record Subscription(String id, String table, Map<String, List<String>> scopes, String paramsJson, long cursor,
        String bootstrapStateJson) implements RequestFrame {
    public Subscription {
        Checks.nonNull(id, "SUBSCRIPTION.id");
        Checks.nonNull(table, "SUBSCRIPTION.table");
        scopes = Checks.scopeLists(scopes, "SUBSCRIPTION.scopes");
        Checks.json(paramsJson, "SUBSCRIPTION.params");
        Checks.safe(cursor, "SUBSCRIPTION.cursor");
        Checks.json(bootstrapStateJson, "SUBSCRIPTION.bootstrapState");
    }

    @Override public int frameType() { return FrameType.SUBSCRIPTION.code(); }
}

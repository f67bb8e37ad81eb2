package syncular.jakarta.sync;

import java.util.List;
import java.util.Set;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The clientId namespaces the server writes under itself (SPEC §1.5): {@code ["remote-command",…]} (REF context.ts,
 * docs/REMOTE.md) and {@code ["backfill",<definition>]}, the RFC 0007 runner's commits (migration.BackfillRunner,
 * issue 7). Their idempotency keys are predictable (the runner's clientCommitIds are {@code epoch:pass:position}),
 * so a client pushing under one could make the server skip its own writes or wedge it; no request, HTTP or socket,
 * may use them. Any JSON array whose first element names a namespace is refused, not just the canonical spelling
 * the server writes, so no variant can ever be taken for one of the server's own ids.
 */
public final class ClientIds {
    /** The first element of every server-owned clientId array. */
    static final Set<String> SERVER_NAMESPACES = Set.of("remote-command", "backfill");

    private ClientIds() { }

    /** Whether {@code clientId} lies in a server-owned namespace. */
    public static boolean reserved(String clientId) {
        if (clientId == null) return false;
        String s = clientId.stripLeading();
        if (!s.startsWith("[")) return false;
        for (String ns : SERVER_NAMESPACES) {
            if (s.startsWith("[\"" + ns + "\"")) return true;
        }
        try {
            return Json.parse(s) instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof String first
                    && SERVER_NAMESPACES.contains(first);
        } catch (RuntimeException e) {
            return false; // not a JSON array at all: an ordinary (if odd) client id
        }
    }

    /** Refuses a server-owned clientId with {@code sync.invalid_client_id} (§1.5, §10.2). */
    public static void refuseReserved(String clientId) {
        if (reserved(clientId)) {
            throw new SyncException(ErrorCode.SYNC_INVALID_CLIENT_ID,
                    "clientId uses a reserved server-command namespace (§1.5)");
        }
    }
}

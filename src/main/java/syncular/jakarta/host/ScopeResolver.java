package syncular.jakarta.host;

import java.util.List;
import java.util.Map;

/**
 * The host's authorization (SPEC §3.2): the scope values an actor may see, keyed by scope variable; {@code "*"}
 * allows any value. Called at most once per request. A throw fails closed: subscriptions are revoked and writes
 * forbidden, never served from a stale answer.
 */
public interface ScopeResolver {
    Map<String, List<String>> resolveScopes(Identity identity);
}

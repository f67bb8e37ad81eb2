package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import syncular.jakarta.host.Authenticator;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.sync.SyncHandler;
import syncular.jakarta.sync.SyncSettings;

/**
 * The running server's parts, wired once the database is reachable and the schema installed: storage, the sync
 * handler, the host SPI. A deployer's own {@link Authenticator} or {@link ScopeResolver} CDI bean replaces the
 * built-in one configured by {@code syncular.auth.*}.
 */
@ApplicationScoped
public class SyncRuntime {
    private static final System.Logger LOG = System.getLogger(SyncRuntime.class.getName());

    @Inject
    @Any
    Instance<Authenticator> authenticators;
    @Inject
    @Any
    Instance<ScopeResolver> resolvers;

    private volatile Parts parts;

    /** Everything a request needs, replaced as a whole. */
    public record Parts(SyncularConfig config, CompiledSchema schema, ServerStorage storage, SyncHandler handler,
                        Authenticator authenticator, Clock clock) { }

    void start(SyncularConfig config, CompiledSchema schema, ServerStorage storage, Clock clock) {
        Authenticator auth = authenticators.isResolvable() ? authenticators.get() : builtInAuthenticator(config);
        ScopeResolver resolver = resolvers.isResolvable() ? resolvers.get() : builtInResolver(config, schema);
        SyncSettings settings = new SyncSettings(config.limits().maxOperationsPerRequest(),
                config.limits().inlineSegmentMaxBytes(), config.limits().maxResponseBytes());
        SyncHandler handler = new SyncHandler(storage, () -> schema, List::of, resolver, clock, settings, null);
        parts = new Parts(config, schema, storage, handler, auth, clock);
    }

    /** The parts, or empty while the server is not ready (database unreachable, schema not installed). */
    public Optional<Parts> parts() { return Optional.ofNullable(parts); }

    static Authenticator builtInAuthenticator(SyncularConfig config) {
        SyncularConfig.Auth auth = config.auth();
        if (auth.mode().isEmpty()) {
            LOG.log(Level.WARNING, "syncular.auth.mode is not set and no Authenticator bean is deployed: "
                    + "every sync request is answered 401 sync.auth_required");
            return credentials -> Optional.empty();
        }
        LOG.log(Level.WARNING, "syncular.auth.mode=fixed: every request acts as one actor in one partition. "
                + "For development and benchmarks only.");
        Identity fixed = new Identity(auth.fixedActor(), auth.fixedPartition());
        return credentials -> Optional.of(fixed);
    }

    static ScopeResolver builtInResolver(SyncularConfig config, CompiledSchema schema) {
        Map<String, List<String>> allowed = config.auth().allowedScopes();
        Map<String, List<String>> resolved = allowed.containsKey("*")
                ? schema.variables().stream().collect(Collectors.toMap(v -> v, v -> List.of("*")))
                : Map.copyOf(allowed);
        return identity -> resolved;
    }
}

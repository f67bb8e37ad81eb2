package syncular.jakarta.web;

import java.util.Optional;
import javax.sql.DataSource;
import syncular.jakarta.host.Authenticator;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.sync.SignedUrls;
import syncular.jakarta.sync.SyncSettings;

/**
 * Replaces the host SPI as a whole while {@code syncular.conformance-host=true}: the conformance host's header
 * authentication, controllable resolver, virtual clock and per-reset limits. Implemented by {@code testhost}.
 */
public interface HostOverride {
    Authenticator authenticator();

    ScopeResolver resolver();

    Clock clock();

    /** Limits given to the last reset, if any. */
    Optional<SyncSettings> settings();

    /** The auth leases the last reset asked for ({@link SyncularConfig.LeaseSettings#OFF} when none). */
    SyncularConfig.LeaseSettings leases();

    /** The §5.4 signer the last reset asked for, empty when it asked for none. */
    Optional<SignedUrls> signedUrls();

    /**
     * The §5.9.3/§5.9.5 native blob-URL signer the host was last asked for (its presign toggle): while present it
     * replaces {@code syncular.blobs.urls}; empty, the configuration stands (inline unless configured otherwise).
     */
    Optional<SignedUrls> blobSignedUrls();

    /**
     * Called once per process, before the runtime first starts on {@code ds}: the host reloads the state it kept in
     * that database, if any, and answers the schema to serve (the last reset's, or {@code configured}).
     */
    CompiledSchema resume(CompiledSchema configured, SyncularConfig config, DataSource ds);

    /** The storage the sync handler uses: {@code storage} with the host's injectable storage faults around it. */
    ServerStorage faults(ServerStorage storage);
}

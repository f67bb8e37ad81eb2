package syncular.jakarta.host;

import java.util.Optional;

/**
 * Host authentication (SPEC §1.1): runs on every request and upgrade; empty means 401 {@code sync.auth_required}.
 * SSP2 carries no credentials of its own. Must not throw for bad credentials: answer empty.
 */
public interface Authenticator {
    Optional<Identity> authenticate(Credentials credentials);
}

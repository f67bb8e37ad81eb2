package syncular.jakarta.host;

/**
 * The outage signal of the {@link ScopeResolver} seam (SPEC §7.3.3): thrown by a resolver whose live authority (an
 * identity provider, a permissions service) is unreachable right now, as opposed to one that failed. With auth leases
 * configured ({@code syncular.leases.*}) the server then authorizes the round against the client's stored lease;
 * without a valid lease the round fails {@code sync.auth_lease_required}. Any other exception from a resolver still
 * fails closed (§3.2 rule 5) and never reaches a lease.
 */
public class AuthorityUnavailable extends RuntimeException {
    public AuthorityUnavailable(String message) { super(message); }

    public AuthorityUnavailable(String message, Throwable cause) { super(message, cause); }
}

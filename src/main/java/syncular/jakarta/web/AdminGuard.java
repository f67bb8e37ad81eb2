package syncular.jakarta.web;

import jakarta.ws.rs.core.SecurityContext;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ErrorCode;

/**
 * The operator role, checked in the resource as a second line behind the web.xml constraint (the CDI resources of
 * the console have no EJB container to enforce {@code @RolesAllowed}).
 */
final class AdminGuard {
    static final String ROLE = "syncular-admin";

    private AdminGuard() { }

    static void require(SecurityContext security) {
        if (security.getUserPrincipal() == null) {
            throw new SyncException(ErrorCode.SYNC_AUTH_REQUIRED, "the operator console needs a login");
        }
        if (!security.isUserInRole(ROLE)) {
            throw new SyncException(ErrorCode.SYNC_FORBIDDEN, "the operator console needs the " + ROLE + " role");
        }
    }
}

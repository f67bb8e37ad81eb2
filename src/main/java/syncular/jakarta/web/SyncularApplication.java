package syncular.jakarta.web;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;
import java.util.Map;

/** JAX-RS at the WAR's root: the protocol mount is the context root ({@code /syncular}), SPEC §1.1. */
@ApplicationPath("/")
public class SyncularApplication extends Application {
    /**
     * Jersey (Payara): no Bean Validation pass around every resource method. No resource declares a constraint, and
     * the pass was ~3 % of the server's CPU samples under the mixed soak (docs/benchmarks.md). RESTEasy (WildFly)
     * ignores the property.
     */
    @Override
    public Map<String, Object> getProperties() {
        return Map.of("jersey.config.beanValidation.disable.server", true);
    }
}

package syncular.jakarta.web;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** JAX-RS at the WAR's root: the protocol mount is the context root ({@code /syncular}), SPEC §1.1. */
@ApplicationPath("/")
public class SyncularApplication extends Application {
}

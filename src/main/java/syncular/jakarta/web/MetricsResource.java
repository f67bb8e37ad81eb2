package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

/**
 * {@code GET <mount>/metrics}: this node's metrics as Prometheus text (issue 20), for a scraper that logs in with
 * the {@code syncular-admin} role (web.xml constraint; Prometheus' {@code basic_auth}). Counted from the node's
 * events ({@link syncular.jakarta.events.EventMetrics}) plus the gauges the running parts register.
 */
@ApplicationScoped
@Path("metrics")
public class MetricsResource {
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    @Inject
    Telemetry telemetry;

    @GET
    @Produces(PROMETHEUS_TEXT)
    public Response scrape(@Context SecurityContext security) {
        AdminGuard.require(security);
        return Response.ok(telemetry.meters().scrape(), PROMETHEUS_TEXT).header("Cache-Control", "no-store").build();
    }
}

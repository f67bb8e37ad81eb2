package syncular.jakarta.web;

import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * {@code GET /health/ready} and {@code /health/live} on the application port, the same on Payara and WildFly
 * (WildFly's own MicroProfile Health sits on the management port). JSON {@code {status, checks:[…]}}; 200 UP,
 * 503 DOWN — the shape of MicroProfile Health, so existing probes read it.
 *
 * <p>These routes are public, so each check shows only its coarse {@code reason} (see {@link Readiness}); the same
 * checks with their operator detail (schema file, database product, the driver's error) are {@code GET admin/health}.
 */
@Path("health")
@Produces(MediaType.APPLICATION_JSON)
public class HealthResource {
    @Inject
    Readiness readiness;

    @GET
    @Path("ready")
    public Response ready() { return readiness(readiness, false); }

    /** The readiness answer; {@code withDetail} adds each check's operator detail (admin role only). */
    static Response readiness(Readiness readiness, boolean withDetail) {
        JsonArrayBuilder checks = Json.createArrayBuilder();
        for (Readiness.Check c : readiness.checks()) {
            JsonObjectBuilder data = Json.createObjectBuilder().add("reason", c.reason());
            if (withDetail) data.add("detail", c.detail());
            checks.add(Json.createObjectBuilder()
                    .add("name", c.name())
                    .add("status", c.up() ? "UP" : "DOWN")
                    .add("data", data));
        }
        return answer(readiness.isReady(), checks);
    }

    @GET
    @Path("live")
    public Response live() {
        // Liveness: the application answers. A database outage is readiness' business, never a restart reason.
        return answer(true, Json.createArrayBuilder().add(
                Json.createObjectBuilder().add("name", "application").add("status", "UP")));
    }

    private static Response answer(boolean up, JsonArrayBuilder checks) {
        JsonObjectBuilder body = Json.createObjectBuilder().add("status", up ? "UP" : "DOWN").add("checks", checks);
        return Response.status(up ? 200 : 503).entity(body.build().toString())
                .type(MediaType.APPLICATION_JSON_TYPE).header("Cache-Control", "no-store").build();
    }
}

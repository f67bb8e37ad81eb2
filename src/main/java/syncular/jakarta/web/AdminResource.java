package syncular.jakarta.web;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;
import syncular.jakarta.migration.CheckpointReport;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The operator surface: {@code GET admin/health} is readiness with each check's detail, and (RFC 0007, issue 7)
 * {@code GET admin/checkpoints} lists every checkpoint with its state,
 * watermark, pass position, observed rows, rate and ETA, plus whether this process serves. Protected twice, the
 * way both servers honour it (WILDFLY.md §5): the web.xml security constraint on {@code /admin/*} (401 without
 * credentials, 403 without the role) and {@code @RolesAllowed} enforced by the EJB container.
 */
@Stateless
@Path("admin")
@RolesAllowed("syncular-admin")
public class AdminResource {
    @Inject
    SyncRuntime runtime;
    @Inject
    Readiness readiness;

    /** The readiness checks with their operator detail, which the public {@code health/ready} leaves out. */
    @GET
    @Path("health")
    @Produces(MediaType.APPLICATION_JSON)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public Response health() { return HealthResource.readiness(readiness, true); }

    @GET
    @Path("checkpoints")
    @Produces(MediaType.APPLICATION_JSON)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // plain reads, each on its own connection
    public Response checkpoints() {
        SyncRuntime.Parts parts = runtime.parts().orElse(null);
        if (parts == null) {
            return ErrorBodies.of(503, ErrorCode.SYNC_SCHEMA_NOT_READY,
                    "the server is starting or its database is unreachable", null);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("runningSchemaVersion", (long) parts.schema().version());
        body.put("declares", parts.declarations().names().stream().sorted().toList());
        body.put("refusal", parts.declarations().refusal().orElse(null));
        body.put("checkpoints", CheckpointReport.build(parts.storage(), parts.declarations(),
                parts.clock()));
        return Response.ok(Json.write(body), MediaType.APPLICATION_JSON).header("Cache-Control", "no-store").build();
    }
}

package syncular.jakarta.web;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.migration.CheckpointReport;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.sync.LogEpochs;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;

/**
 * The operator surface: {@code GET admin/health} is readiness with each check's detail, and (RFC 0007, issue 7)
 * {@code GET admin/checkpoints} lists every checkpoint with its state,
 * watermark, pass position, observed rows, rate and ETA, plus whether this process serves, and
 * {@code POST admin/log-epochs} rotates the log epochs after a backup restore ({@link LogEpochs}), and
 * {@code POST admin/leases/{leaseId}/revoke} revokes an auth lease (SPEC §7.3.4), and {@code GET admin/} is the
 * operator console page (issue 20) with its files under {@code admin/assets/} ({@link ConsoleAssets}). Protected
 * twice, the
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

    /**
     * The console page. Its files are named relative to {@code admin/}, so {@code admin} without the slash is
     * redirected there first.
     */
    @GET
    @Produces(MediaType.TEXT_HTML)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public Response page(@Context UriInfo uri, @HeaderParam("If-None-Match") String ifNoneMatch) {
        if (!uri.getRequestUri().getRawPath().endsWith("/")) {
            return Response.status(Response.Status.MOVED_PERMANENTLY)
                    .location(uri.getRequestUriBuilder().replacePath(uri.getRequestUri().getRawPath() + "/")
                            .replaceQuery(null).build())
                    .build();
        }
        return consoleFile(ConsoleAssets.PAGE, ifNoneMatch);
    }

    /** One of the page's files (script, style sheet, icon); any other name is 404. */
    @GET
    @Path("assets/{name}")
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public Response asset(@PathParam("name") String name, @HeaderParam("If-None-Match") String ifNoneMatch) {
        return consoleFile(name, ifNoneMatch);
    }

    private static Response consoleFile(String name, String ifNoneMatch) {
        ConsoleAssets.Asset asset = ConsoleAssets.shipped().find(name).orElse(null);
        if (asset == null) {
            return ErrorBodies.of(404, ErrorCode.SYNC_NOT_FOUND, "the console has no such file", null);
        }
        Response.ResponseBuilder r = asset.matches(ifNoneMatch) ? Response.notModified()
                : Response.ok(asset.body(), asset.mediaType());
        return r.tag(new EntityTag(asset.etag()))
                .header("Content-Security-Policy", ConsoleAssets.CONTENT_SECURITY_POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .header("X-Frame-Options", "DENY")
                .header("Referrer-Policy", "no-referrer")
                // revalidated on every load (the ETag makes that cheap), so a redeployed console is seen at once
                .header("Cache-Control", "no-cache")
                .build();
    }

    /** The readiness checks with their operator detail, which the public {@code health/ready} leaves out. */
    @GET
    @Path("health")
    @Produces(MediaType.APPLICATION_JSON)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public Response health() { return HealthResource.readiness(readiness, true); }

    /**
     * After restoring the database from a backup, before serving traffic (SPEC §2.1, docs/operations.md): every
     * partition of the registry, or only {@code ?partition=}, gets a new log epoch; answers them. Unknown partition:
     * 404 {@code sync.not_found}, nothing rotated.
     */
    @POST
    @Path("log-epochs")
    @Produces(MediaType.APPLICATION_JSON)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // each rotation is a storage transaction of its own
    public Response rotateLogEpochs(@QueryParam("partition") String partition) {
        SyncRuntime.Parts parts = runtime.parts().orElse(null);
        if (parts == null) {
            return ErrorBodies.of(503, ErrorCode.SYNC_SCHEMA_NOT_READY,
                    "the server is starting or its database is unreachable", null);
        }
        List<Map<String, Object>> rotated = new ArrayList<>();
        // an empty ?partition= names no partition (404), it never widens to all of them
        for (PartitionRegistryEntry e : LogEpochs.rotateAfterRestore(parts.storage(), parts.clock(), partition)) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("partition", e.partition());
            one.put("logEpoch", e.logEpoch());
            rotated.add(one);
        }
        return Response.ok(Json.write(Map.of("rotated", rotated)), MediaType.APPLICATION_JSON)
                .header("Cache-Control", "no-store").build();
    }

    /**
     * SPEC §7.3.4: revokes the auth lease {@code leaseId} of {@code ?partition=} (required): the client's next
     * lease-authorized round fails {@code sync.auth_lease_revoked}; its live rounds are unaffected and, once the
     * resolver answers again, mint it a fresh lease. 404 {@code sync.not_found} for a lease the partition does not
     * hold, or when leases are off.
     */
    @POST
    @Path("leases/{leaseId}/revoke")
    @Produces(MediaType.APPLICATION_JSON)
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // one statement in autocommit
    public Response revokeLease(@PathParam("leaseId") String leaseId, @QueryParam("partition") String partition) {
        SyncRuntime.Parts parts = runtime.parts().orElse(null);
        if (parts == null) {
            return ErrorBodies.of(503, ErrorCode.SYNC_SCHEMA_NOT_READY,
                    "the server is starting or its database is unreachable", null);
        }
        if (partition == null || partition.isEmpty()) {
            return ErrorBodies.of(400, ErrorCode.SYNC_INVALID_REQUEST, "?partition= names the lease's partition",
                    null);
        }
        parts.leases().revoke(partition, leaseId);
        return Response.ok(Json.write(Map.of("revoked", leaseId, "partition", partition)),
                MediaType.APPLICATION_JSON).header("Cache-Control", "no-store").build();
    }

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

package syncular.jakarta.testhost;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.SchemaCompiler;
import syncular.jakarta.schema.SchemaException;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.postgres.PostgresConformanceSupport;
import syncular.jakarta.sync.Retention;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.sync.SyncSettings;
import syncular.jakarta.web.RealtimeService;
import syncular.jakarta.web.SyncRuntime;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.TypeTag;

/**
 * {@code /__conformance/*}: the control plane of the conformance host (see the package comment). Every reply is
 * 200 JSON ({@code {}} when there is nothing to return); failures use the §10.1 shape.
 */
@Path("__conformance")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.WILDCARD)
public class ConformanceResource {
    @Inject
    ConformanceHost host;
    @Inject
    SyncRuntime runtime;
    @Inject
    RealtimeService realtime;

    @POST
    @Path("reset")
    public Response reset(String body) {
        Map<String, Object> req = object(body);
        String partition = string(req.get("partition"), "partition");
        long nowMs = number(req.get("nowMs"), "nowMs");
        if (!(req.get("schema") instanceof Map<?, ?> schemaJson)) throw invalid("schema must be an object");
        CompiledSchema schema;
        try {
            schema = SchemaCompiler.compile(Json.write(schemaJson));
        } catch (SchemaException e) {
            throw invalid(e.getMessage());
        }
        SyncRuntime.Parts parts = parts();
        SyncSettings defaults = parts.config().limits().settings();
        SyncSettings limits = defaults;
        if (req.get("limits") instanceof Map<?, ?> l) {
            limits = new SyncSettings(
                    l.get("maxOperationsPerRequest") == null ? defaults.maxOperationsPerRequest()
                            : (int) number(l.get("maxOperationsPerRequest"), "limits.maxOperationsPerRequest"),
                    l.get("inlineSegmentMaxBytes") == null ? defaults.inlineSegmentMaxBytes()
                            : (int) number(l.get("inlineSegmentMaxBytes"), "limits.inlineSegmentMaxBytes"),
                    defaults.maxResponseBytes(),
                    l.get("segmentTtlMs") == null ? defaults.segmentTtlMs()
                            : number(l.get("segmentTtlMs"), "limits.segmentTtlMs"));
        }
        synchronized (ConformanceResource.class) {
            new PostgresConformanceSupport(parts.dataSource()).wipe(parts.runner());
            host.reset(partition, nowMs, limits);
            runtime.start(parts.config(), schema, parts.dataSource(), parts.runner());
            realtime.reset(req.get("limits") instanceof Map<?, ?> l && l.get("maxDeltaBytes") != null
                            ? (int) number(l.get("maxDeltaBytes"), "limits.maxDeltaBytes") : null,
                    req.get("limits") instanceof Map<?, ?> l2 && l2.get("maxPresenceBytes") != null
                            ? (int) number(l2.get("maxPresenceBytes"), "limits.maxPresenceBytes") : null);
        }
        return ok(Map.of("capabilities", capabilityNames()));
    }

    @GET
    @Path("capabilities")
    public Response capabilities() {
        guard();
        return ok(Map.of("capabilities", capabilityNames()));
    }

    @PUT
    @Path("actors/{actorId}/allowed")
    public Response allowed(@PathParam("actorId") String actorId, String body) {
        Map<String, Object> req = object(body);
        Map<String, List<String>> scopes = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : req.entrySet()) {
            if (!(e.getValue() instanceof List<?> values) || values.stream().anyMatch(v -> !(v instanceof String))) {
                throw invalid("allowed scopes must map each variable to a list of strings");
            }
            scopes.put(e.getKey(), values.stream().map(String.class::cast).toList());
        }
        host.allow(actorId, scopes);
        return ok(Map.of());
    }

    @POST
    @Path("resolver")
    public Response resolver(String body) {
        Map<String, Object> req = object(body);
        host.resolverFlags(bool(req.get("failing"), "failing"), bool(req.get("outage"), "outage"));
        return ok(Map.of());
    }

    @GET
    @Path("clock")
    public Response clock() {
        guard();
        return ok(Map.of("nowMs", host.now()));
    }

    @POST
    @Path("clock/advance")
    public Response advance(String body) {
        long ms = number(object(body).get("ms"), "ms");
        if (ms < 0) throw invalid("ms must not be negative: the virtual clock only moves forward");
        return ok(Map.of("nowMs", host.advance(ms)));
    }

    @POST
    @Path("prune")
    public Response prune(String body) {
        guard();
        Map<String, Object> req = body == null || body.isBlank() ? Map.of() : object(body);
        Retention r = Retention.DEFAULTS;
        if (req.get("retention") instanceof Map<?, ?> m) {
            r = new Retention(
                    m.get("activeWindowMs") == null ? r.activeWindowMs() : number(m.get("activeWindowMs"), "activeWindowMs"),
                    m.get("ageForceMs") == null ? r.ageForceMs() : number(m.get("ageForceMs"), "ageForceMs"),
                    m.get("minRetainedCommits") == null ? r.minRetainedCommits()
                            : number(m.get("minRetainedCommits"), "minRetainedCommits"));
        }
        long horizon = r.prune(parts().storage(), host.partition(), host.now());
        return ok(Map.of("horizonSeq", horizon));
    }

    @GET
    @Path("max-commit-seq")
    public Response maxCommitSeq() {
        guard();
        return ok(Map.of("value", parts().storage().getMaxCommitSeq(host.partition())));
    }

    @GET
    @Path("horizon-seq")
    public Response horizonSeq() {
        guard();
        return ok(Map.of("value", parts().storage().getHorizonSeq(host.partition())));
    }

    @GET
    @Path("tables/{table}/rows")
    public Response rows(@PathParam("table") String tableName) {
        guard();
        SyncRuntime.Parts parts = parts();
        TableSchema table = parts.schema().table(tableName)
                .orElseThrow(() -> new SyncException(ErrorCode.SYNC_UNKNOWN_TABLE, "no such table in the schema"));
        List<Object> out = new ArrayList<>();
        for (StoredRow row : new PostgresConformanceSupport(parts.dataSource()).rows(host.partition(), tableName)) {
            Object[] values = RowCodec.decode(table.descriptors(), row.payload());
            Map<String, Object> driverValues = new LinkedHashMap<>();
            for (int i = 0; i < values.length; i++) driverValues.put(table.columns().get(i).name(),
                    driverValue(table.columns().get(i), values[i]));
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("rowId", row.rowId());
            r.put("version", row.serverVersion());
            r.put("values", driverValues);
            r.put("scopes", row.scopes());
            out.add(r);
        }
        return ok(out);
    }

    /** The driver form of a value (upstream conformance driver.ts {@code DriverRowValue}). */
    static Object driverValue(ColumnSchema column, Object value) {
        if (value == null) return null;
        if (value instanceof byte[] b) return Map.of("$bytes", HexFormat.of().formatHex(b));
        if (column.type() == TypeTag.JSON || column.type() == TypeTag.BLOB_REF) return value; // raw JSON text
        return value;
    }

    /** Only optional features that really work and whose control routes exist. */
    private static List<String> capabilityNames() { return List.of(); }

    private SyncRuntime.Parts parts() {
        return runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
    }

    private void guard() {
        if (!host.enabled()) throw new jakarta.ws.rs.NotFoundException();
    }

    private Map<String, Object> object(String body) {
        guard();
        try {
            if (Json.parse(body == null ? "" : body) instanceof Map<?, ?> m) {
                @SuppressWarnings("unchecked")
                Map<String, Object> typed = (Map<String, Object>) m;
                return typed;
            }
        } catch (Json.JsonException e) {
            throw invalid("the body is not JSON");
        }
        throw invalid("the body must be a JSON object");
    }

    private static String string(Object v, String name) {
        if (v instanceof String s && !s.isEmpty()) return s;
        throw invalid(name + " must be a non-empty string");
    }

    private static long number(Object v, String name) {
        if (v instanceof BigDecimal d) {
            try {
                return d.longValueExact();
            } catch (ArithmeticException e) {
                throw invalid(name + " must be a whole number");
            }
        }
        throw invalid(name + " must be a number");
    }

    private static Boolean bool(Object v, String name) {
        if (v == null) return null;
        if (v instanceof Boolean b) return b;
        throw invalid(name + " must be true or false");
    }

    private static SyncException invalid(String message) {
        return new SyncException(ErrorCode.SYNC_INVALID_REQUEST, message);
    }

    private static Response ok(Object body) {
        return Response.ok(Json.write(body), MediaType.APPLICATION_JSON_TYPE).header("Cache-Control", "no-store").build();
    }

}

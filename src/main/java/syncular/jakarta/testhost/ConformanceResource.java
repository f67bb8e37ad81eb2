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
import syncular.jakarta.sync.LogEpochs;
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
        SyncRuntime.Parts parts = parts();
        ResetSpec spec = ResetSpec.parse(object(body), parts.config().limits().settings());
        synchronized (ConformanceResource.class) {
            new PostgresConformanceSupport(parts.dataSource()).wipe(parts.runner());
            host.reset(spec);
            runtime.start(parts.config(), spec.schema(), parts.dataSource(), parts.runner());
            realtime.reset(spec.maxDeltaBytes(), spec.maxPresenceBytes());
        }
        return ok(Map.of("capabilities", capabilityNames()));
    }

    /**
     * A reset's request, checked: the partition, virtual time, schema, limits and lease TTL a reset applies. Kept
     * as it came ({@code raw}) in the host's durable state, and parsed again from there after a restart.
     */
    record ResetSpec(Map<String, Object> raw, String partition, long nowMs, CompiledSchema schema,
                     SyncSettings limits, long leaseTtlMs, Integer maxDeltaBytes, Integer maxPresenceBytes,
                     String signedUrlBase, long signedUrlTtlMs) {
        static ResetSpec parse(Map<String, Object> req, SyncSettings defaults) {
            String partition = string(req.get("partition"), "partition");
            long nowMs = number(req.get("nowMs"), "nowMs");
            if (!(req.get("schema") instanceof Map<?, ?> schemaJson)) throw invalid("schema must be an object");
            CompiledSchema schema;
            try {
                schema = SchemaCompiler.compile(Json.write(schemaJson));
            } catch (SchemaException e) {
                throw invalid(e.getMessage());
            }
            SyncSettings limits = defaults;
            Integer maxDelta = null;
            Integer maxPresence = null;
            if (req.get("limits") instanceof Map<?, ?> l) {
                limits = new SyncSettings(
                        l.get("maxOperationsPerRequest") == null ? defaults.maxOperationsPerRequest()
                                : (int) number(l.get("maxOperationsPerRequest"), "limits.maxOperationsPerRequest"),
                        l.get("inlineSegmentMaxBytes") == null ? defaults.inlineSegmentMaxBytes()
                                : (int) number(l.get("inlineSegmentMaxBytes"), "limits.inlineSegmentMaxBytes"),
                        defaults.maxResponseBytes(),
                        l.get("segmentTtlMs") == null ? defaults.segmentTtlMs()
                                : number(l.get("segmentTtlMs"), "limits.segmentTtlMs"),
                        defaults.maxSubscriptionsPerRequest(), defaults.admission(),
                        l.get("maxCascadeOperationsPerCommit") == null ? defaults.maxCascadeOperationsPerCommit()
                                : (int) number(l.get("maxCascadeOperationsPerCommit"),
                                        "limits.maxCascadeOperationsPerCommit"),
                        defaults.pageCacheBytes(), defaults.recentCommitBytes());
                if (l.get("maxDeltaBytes") != null) {
                    maxDelta = (int) number(l.get("maxDeltaBytes"), "limits.maxDeltaBytes");
                }
                if (l.get("maxPresenceBytes") != null) {
                    maxPresence = (int) number(l.get("maxPresenceBytes"), "limits.maxPresenceBytes");
                }
            }
            long leaseTtl = 0;
            if (req.get("leases") instanceof Map<?, ?> leases) {
                leaseTtl = number(leases.get("ttlMs"), "leases.ttlMs");
                if (leaseTtl <= 0) throw invalid("leases.ttlMs must be positive");
            }
            // §5.4 signed URLs (capability signed-urls): our driver adds the base its URL host answers under, since
            // this process does not know the address the harness reaches it by
            String signedBase = null;
            long signedTtlMs = 0;
            if (req.get("signedUrls") instanceof Map<?, ?> su) {
                signedBase = string(su.get("baseUrl"), "signedUrls.baseUrl");
                signedTtlMs = su.get("ttlSeconds") == null ? syncular.jakarta.sync.SignedUrls.DEFAULT_TTL_MS
                        : 1000 * number(su.get("ttlSeconds"), "signedUrls.ttlSeconds");
                if (signedTtlMs < 0) throw invalid("signedUrls.ttlSeconds must not be negative");
            }
            return new ResetSpec(req, partition, nowMs, schema, limits, leaseTtl, maxDelta, maxPresence, signedBase,
                    signedTtlMs);
        }
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

    /** {@code setSignedUrlTtlSeconds}: the TTL of URLs minted from now on (0: born expired, §5.4). */
    @POST
    @Path("signed-urls/ttl")
    public Response signedUrlTtl(String body) {
        long seconds = number(object(body).get("ttlSeconds"), "ttlSeconds");
        if (seconds < 0) throw invalid("ttlSeconds must not be negative");
        host.signedUrlTtl(seconds * 1000);
        return ok(Map.of());
    }

    /**
     * {@code setBlobPresign} (capability blob-presign, §5.9.3/§5.9.5): {@code {"enabled":true,"baseUrl":…}} makes
     * blob downloads answer a signed URL and upload grants a signed PUT URL, both served by this host under
     * {@code baseUrl} (our driver gives {@code <its SYNCULAR_URL>/blobs}, the address only it knows);
     * {@code {"enabled":false}} turns both off. The runtime restarts on the same database to take it up.
     */
    @POST
    @Path("blobs/presign")
    public Response blobPresign(String body) {
        SyncRuntime.Parts parts = parts();
        Map<String, Object> req = object(body);
        Boolean enabled = bool(req.get("enabled"), "enabled");
        if (enabled == null) throw invalid("enabled is required");
        String base = enabled ? string(req.get("baseUrl"), "baseUrl") : null;
        synchronized (ConformanceResource.class) {
            host.blobPresign(base);
            runtime.start(parts.config(), parts.schema(), parts.dataSource(), parts.runner());
        }
        return ok(Map.of());
    }

    /** §7.3.4: the host revokes a lease of the current partition by id, {@code {leaseId}}. */
    @POST
    @Path("leases/revoke")
    public Response revokeLease(String body) {
        parts().leases().revoke(host.partition(), string(object(body).get("leaseId"), "leaseId"));
        return ok(Map.of());
    }

    /** The catalog's {@code captureBackup}: the database as it is now, kept aside for {@link #restoreBackup}. */
    @POST
    @Path("backup/capture")
    public Response captureBackup(String body) {
        object(body);
        SyncRuntime.Parts parts = parts();
        new PostgresConformanceSupport(parts.dataSource()).captureBackup(parts.runner());
        return ok(Map.of());
    }

    /**
     * The catalog's {@code restoreBackup}, done as docs/operations.md tells an operator: the database goes back to
     * the captured copy, then the partition's log epoch is rotated (SPEC §2.1) through the storage, which tells every
     * node's commit feed; the runtime restarts on the restored database so no cache of the later log survives.
     */
    @POST
    @Path("backup/restore")
    public Response restoreBackup(String body) {
        object(body);
        SyncRuntime.Parts parts = parts();
        synchronized (ConformanceResource.class) {
            new PostgresConformanceSupport(parts.dataSource()).restoreBackup(parts.runner());
            SyncRuntime.Parts restarted = runtime.start(parts.config(), parts.schema(), parts.dataSource(),
                    parts.runner());
            LogEpochs.rotateAfterRestore(restarted.storage(), restarted.clock(), host.partition());
        }
        return ok(Map.of());
    }

    /** §6.3: the next push's idempotency lookup fails as an unreadable stored result would. */
    @POST
    @Path("faults/idempotency-lookup")
    public Response failNextIdempotencyLookup(String body) {
        object(body);
        host.failNextIdempotencyLookup();
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
        long horizon = r.prune(parts().storage(), host.partition(), host.now()).horizonSeq();
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

    /**
     * §6.7 rules installed as real validators: {@code [{table, rule}]}, one rule per table, {@code []} = off.
     * Kinds {@code maxLength {column, max, code}} and {@code immutableWhen {column, guardColumn, guardValue, code}}.
     */
    @POST
    @Path("validators")
    public Response installValidators(String body) {
        guard();
        Object parsed = parse(body);
        host.installValidators(parsed, validatorRules(parsed, parts().schema()));
        return ok(Map.of());
    }

    /** The rules of a {@code validators} request, checked against {@code schema}. */
    static Map<String, ConformanceValidators.Rule> validatorRules(Object parsed, CompiledSchema schema) {
        if (!(parsed instanceof List<?> specs)) throw invalid("the body must be a JSON array of {table, rule}");
        Map<String, ConformanceValidators.Rule> rules = new LinkedHashMap<>();
        for (Object spec : specs) {
            if (!(spec instanceof Map<?, ?> m) || !(m.get("rule") instanceof Map<?, ?> rule)) {
                throw invalid("each validator spec must be {table, rule}");
            }
            TableSchema table = tableOf(schema, m.get("table"));
            if (rules.containsKey(table.name())) throw invalid("one rule per table");
            String code = code(rule.get("code"));
            Object kind = rule.get("kind");
            String column = columnOf(table, rule.get("column"), "rule.column");
            try {
                if ("maxLength".equals(kind)) {
                    long max = number(rule.get("max"), "rule.max");
                    if (max < 0) throw invalid("rule.max must not be negative");
                    rules.put(table.name(), new ConformanceValidators.MaxLength(column, max, code));
                } else if ("immutableWhen".equals(kind)) {
                    String guardColumn = columnOf(table, rule.get("guardColumn"), "rule.guardColumn");
                    Object guardValue = ConformanceValidators.columnValue(table, guardColumn, rule.get("guardValue"));
                    rules.put(table.name(), new ConformanceValidators.ImmutableWhen(column, guardColumn, guardValue,
                            code));
                } else {
                    throw invalid("unknown validator rule kind");
                }
            } catch (IllegalArgumentException | ArithmeticException e) {
                throw invalid(e.getMessage());
            }
        }
        return rules;
    }

    /** §6.8: {@code {spec?: {kind: "requireSiblingWhen", table, column, equals, siblingRowIdSuffix, code}}}. */
    @POST
    @Path("commit-validator")
    public Response installCommitValidator(String body) {
        guard();
        Map<String, Object> req = body == null || body.isBlank() ? jsonObject("{}") : object(body);
        Object spec = req.get("spec");
        host.installCommitValidator(spec, commitRule(spec, parts().schema()));
        return ok(Map.of());
    }

    /** The rule of a {@code commit-validator} request's spec, checked against {@code schema}; null = none. */
    static ConformanceValidators.RequireSiblingWhen commitRule(Object spec, CompiledSchema schema) {
        if (spec == null) return null;
        if (!(spec instanceof Map<?, ?> m)) throw invalid("spec must be an object");
        if (!"requireSiblingWhen".equals(m.get("kind"))) throw invalid("unknown commit validator kind");
        TableSchema table = tableOf(schema, m.get("table"));
        String column = columnOf(table, m.get("column"), "spec.column");
        if (!(m.get("siblingRowIdSuffix") instanceof String suffix) || suffix.isEmpty()) {
            throw invalid("spec.siblingRowIdSuffix must be a non-empty string");
        }
        String code = code(m.get("code"));
        Object equals;
        try {
            equals = ConformanceValidators.columnValue(table, column, m.get("equals"));
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw invalid(e.getMessage());
        }
        return new ConformanceValidators.RequireSiblingWhen(table.name(), column, equals, suffix, code);
    }

    private static TableSchema tableOf(CompiledSchema schema, Object name) {
        if (!(name instanceof String t)) throw invalid("table must be a string");
        return schema.table(t).orElseThrow(() -> invalid("no such table in the schema"));
    }

    private static String columnOf(TableSchema table, Object name, String what) {
        if (!(name instanceof String c) || table.column(c).isEmpty()) {
            throw invalid(what + " must name a column of the table");
        }
        return c;
    }

    /** A host code (§6.7): non-empty and outside the reserved protocol families. */
    private static String code(Object value) {
        if (!(value instanceof String c)) throw invalid("code must be a string");
        try {
            syncular.jakarta.host.ValidationRejection.checkCode(c);
        } catch (IllegalArgumentException e) {
            throw invalid(e.getMessage());
        }
        return c;
    }

    /** The driver form of a value (upstream conformance driver.ts {@code DriverRowValue}). */
    static Object driverValue(ColumnSchema column, Object value) {
        if (value == null) return null;
        if (value instanceof byte[] b) return Map.of("$bytes", HexFormat.of().formatHex(b));
        if (column.type() == TypeTag.JSON || column.type() == TypeTag.BLOB_REF) return value; // raw JSON text
        return value;
    }

    /** Only optional features that really work and whose control routes exist. */
    private static List<String> capabilityNames() { return List.of("validators", "commit-validators", "leases", "idempotency-fault",
            "backup-restore", "blobs", "blob-presign", "signed-urls"); }

    private SyncRuntime.Parts parts() {
        return runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
    }

    private void guard() {
        if (!host.enabled()) throw new jakarta.ws.rs.NotFoundException();
    }

    private Map<String, Object> object(String body) {
        guard();
        return jsonObject(body);
    }

    private static Map<String, Object> jsonObject(String body) {
        if (parse(body) instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> typed = (Map<String, Object>) m;
            return typed;
        }
        throw invalid("the body must be a JSON object");
    }

    private static Object parse(String body) {
        try {
            return Json.parse(body == null ? "" : body);
        } catch (Json.JsonException e) {
            throw invalid("the body is not JSON");
        }
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

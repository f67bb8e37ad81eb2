package syncular.jakarta.web;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.EJB;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import syncular.jakarta.console.AuditEntry;
import syncular.jakarta.console.ChangeEntry;
import syncular.jakarta.console.ClientEntry;
import syncular.jakarta.console.CommitEntry;
import syncular.jakarta.console.OperatorViews;
import syncular.jakarta.events.EventRing;
import syncular.jakarta.events.RateWindow;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.realtime.RealtimeHub;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.AuditLog;
import syncular.jakarta.storage.CommitPruneResult;
import syncular.jakarta.storage.PartitionRegistryEntry;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.sync.LogEpochs;
import syncular.jakarta.sync.Retention;
import syncular.jakarta.sync.SyncException;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.RowCodec;

/**
 * The operator console's JSON API under {@code admin/console/} (issue 20): who is connected, who is behind, what is
 * failing, how far the log and the backfills are — and the actions an operator takes: prune a partition now, rotate
 * its log epoch, disconnect a client's sockets. Views read through JPA ({@link OperatorViews}); actions go through
 * the storage path, each audited (who, when, what, how it ended: {@code admin/console/audit} and an
 * {@code admin.action} event) and protected against CSRF by a double-submitted token: {@code GET session} sets it
 * as a SameSite cookie and answers it, and every action must send it back in {@code X-Syncular-CSRF}. The role is
 * enforced by the web.xml constraint on {@code /admin/*} and, again, by the EJB container.
 */
@Stateless
@Path("admin/console")
@RolesAllowed("syncular-admin")
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)   // views read on their own; actions own theirs
@Produces(MediaType.APPLICATION_JSON)
public class ConsoleResource {
    static final String CSRF_COOKIE = "syncular-csrf";
    static final String CSRF_HEADER = "X-Syncular-CSRF";
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
    private static final System.Logger LOG = System.getLogger(ConsoleResource.class.getName());

    @Inject
    SyncRuntime runtime;
    @Inject
    Telemetry telemetry;
    @Inject
    Readiness readiness;
    @Inject
    RealtimeService realtime;
    @Inject
    Pruning pruning;
    @EJB
    OperatorViews views;

    // ------------------------------------------------------------------ session

    /** The operator's name and a fresh CSRF token, also set as the cookie the actions compare it with. */
    @GET
    @Path("session")
    public Response session(@Context SecurityContext security, @Context UriInfo uri) {
        byte[] bytes = new byte[24];
        RANDOM.nextBytes(bytes);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        String path = uri.getBaseUri().getRawPath().replaceAll("/+$", "") + "/admin";
        String cookie = CSRF_COOKIE + "=" + token + "; Path=" + (path.isEmpty() ? "/" : path)
                + "; HttpOnly; SameSite=Strict" + ("https".equals(uri.getBaseUri().getScheme()) ? "; Secure" : "");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("operator", security.getUserPrincipal().getName());
        body.put("csrfToken", token);
        return json(body).header("Set-Cookie", cookie).build();
    }

    // ------------------------------------------------------------------ views

    /** Readiness, sockets, the partitions with their clients and prune recommendation, the event ring's head. */
    @GET
    @Path("overview")
    public Response overview() {
        SyncRuntime.Parts parts = parts();
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("ready", readiness.isReady());
        List<Map<String, Object>> checks = new ArrayList<>();
        for (Readiness.Check c : readiness.checks()) {
            checks.add(Map.of("name", c.name(), "up", c.up(), "reason", c.reason(),
                    "detail", c.detail() == null ? "" : c.detail()));
        }
        node.put("checks", checks);
        node.put("openSockets", realtime.runningHub().map(RealtimeHub::openSockets).orElse(0));
        node.put("nextEventSeq", telemetry.events().ring().nextSeq());
        node.put("schemaVersion", parts.schema().version());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("node", node);
        body.put("partitions", partitionList(parts));
        return json(body).build();
    }

    @GET
    @Path("partitions")
    public Response partitions() {
        return json(Map.of("partitions", partitionList(parts()))).build();
    }

    private List<Map<String, Object>> partitionList(SyncRuntime.Parts parts) {
        long now = parts.clock().nowMs();
        Retention policy = parts.config().retention().policy();
        List<Map<String, Object>> out = new ArrayList<>();
        for (OperatorViews.PartitionFigures p : views.partitions(now - policy.activeWindowMs())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("partition", p.partition());
            m.put("maxCommitSeq", p.maxCommitSeq());
            m.put("horizonSeq", p.horizonSeq());
            m.put("retainedCommits", p.retainedCommits());
            m.put("logEpoch", p.logEpoch());
            m.put("lastAuthenticatedAtMs", p.lastAuthenticatedAtMs());
            m.put("knownClients", p.knownClients());
            m.put("activeClients", p.activeClients());
            m.put("lowestActiveCursor", p.lowestActiveCursor());
            long target = policy.targetHorizon(parts.storage(), p.partition(), now);
            m.put("pruneRecommendation", Map.of("targetHorizonSeq", target,
                    "removableCommits", Math.max(0, target - p.horizonSeq())));
            out.add(m);
        }
        return out;
    }

    /** A partition's clients, furthest behind first, with their lag behind the log head. */
    @GET
    @Path("partitions/{partition}/clients")
    public Response clients(@PathParam("partition") String partition, @QueryParam("limit") Integer limit) {
        SyncRuntime.Parts parts = parts();
        long head = views.partition(partition).orElseThrow(() -> unknownPartition(partition)).maxCommitSeq();
        Optional<RealtimeHub> hub = realtime.runningHub();
        List<Map<String, Object>> out = new ArrayList<>();
        for (ClientEntry c : views.clients(partition, limit(limit, 200))) {
            out.add(client(c, head, hub.map(h -> h.socketsOf(partition, c.clientId())).orElse(0)));
        }
        return json(Map.of("partition", partition, "maxCommitSeq", head, "clients", out,
                "activeWindowMs", parts.config().retention().policy().activeWindowMs())).build();
    }

    /** One client: its record, subscriptions, sockets on this node and its recent events on this node. */
    @GET
    @Path("partitions/{partition}/clients/{clientId}")
    public Response client(@PathParam("partition") String partition, @PathParam("clientId") String clientId) {
        long head = views.partition(partition).orElseThrow(() -> unknownPartition(partition)).maxCommitSeq();
        ClientEntry c = views.client(partition, clientId).orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND,
                "no client " + clientId + " in partition " + partition));
        Map<String, Object> m = client(c, head, realtime.runningHub().map(h -> h.socketsOf(partition, clientId)).orElse(0));
        m.put("subscriptions", Json.parse(c.subscriptions()));
        List<Map<String, Object>> events = new ArrayList<>();
        for (EventRing.Sequenced s : telemetry.events().ring().after(0, 100,
                e -> partition.equals(e.partition()) && clientId.equals(e.clientId()))) {
            events.add(EventsResource.json(s));
        }
        m.put("recentEvents", events);
        return json(m).build();
    }

    private static Map<String, Object> client(ClientEntry c, long head, int sockets) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("clientId", c.clientId());
        m.put("actorId", c.actorId());
        m.put("cursor", c.cursor());
        m.put("lag", c.cursor() < 0 ? head : Math.max(0, head - c.cursor()));
        m.put("wireVersion", c.wireVersion());
        m.put("updatedAtMs", c.updatedAtMs());
        m.put("socketsOnThisNode", sockets);
        return m;
    }

    /** A partition's newest commits (below {@code before}, exclusive), with their changes per table. */
    @GET
    @Path("partitions/{partition}/commits")
    public Response commits(@PathParam("partition") String partition, @QueryParam("before") Long before,
                            @QueryParam("limit") Integer limit) {
        views.partition(partition).orElseThrow(() -> unknownPartition(partition));
        List<Map<String, Object>> out = new ArrayList<>();
        for (OperatorViews.CommitSummary s : views.commits(partition, before == null ? Long.MAX_VALUE : before,
                limit(limit, 50))) {
            Map<String, Object> m = commit(s.commit());
            m.put("changesByTable", s.changesByTable());
            out.add(m);
        }
        return json(Map.of("partition", partition, "commits", out)).build();
    }

    /** One commit and its changes (at most 500). */
    @GET
    @Path("partitions/{partition}/commits/{commitSeq}")
    public Response commit(@PathParam("partition") String partition, @PathParam("commitSeq") long commitSeq) {
        CommitEntry c = views.commit(partition, commitSeq).orElseThrow(() -> new SyncException(
                ErrorCode.SYNC_NOT_FOUND, "no commit " + commitSeq + " in partition " + partition
                + " (never made, or pruned)"));
        Map<String, Object> m = commit(c);
        List<Map<String, Object>> changes = new ArrayList<>();
        for (ChangeEntry ch : views.changes(partition, commitSeq, 500)) changes.add(change(ch));
        m.put("changes", changes);
        return json(m).build();
    }

    private static Map<String, Object> commit(CommitEntry c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("commitSeq", c.commitSeq());
        m.put("createdAtMs", c.createdAtMs());
        m.put("actorId", c.actorId());
        m.put("clientId", c.clientId());
        m.put("clientCommitId", c.clientCommitId());
        m.put("writerVersion", c.writerVersion());
        return m;
    }

    private static Map<String, Object> change(ChangeEntry ch) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("commitSeq", ch.commitSeq());
        m.put("table", ch.table());
        m.put("rowId", ch.rowId());
        m.put("op", ch.op() == 1 ? "upsert" : "delete");
        m.put("rowVersion", ch.rowVersion());
        m.put("scopes", Json.parse(ch.scopes()));
        return m;
    }

    /** One row: its stored version and values, scopes, the blobs it references and its retained history. */
    @GET
    @Path("partitions/{partition}/rows/{table}/{rowId}")
    public Response row(@PathParam("partition") String partition, @PathParam("table") String table,
                        @PathParam("rowId") String rowId) {
        SyncRuntime.Parts parts = parts();
        TableSchema schema = parts.schema().table(table).orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND,
                "the running schema has no table " + table));
        Optional<StoredRow> row = parts.storage().inTransaction(partition, tx -> tx.getRow(table, rowId));
        List<Map<String, Object>> history = new ArrayList<>();
        for (ChangeEntry ch : views.rowHistory(partition, table, rowId, 20)) history.add(change(ch));
        if (row.isEmpty() && history.isEmpty()) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "no row " + rowId + " in " + table + " of " + partition);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("partition", partition);
        m.put("table", table);
        m.put("rowId", rowId);
        m.put("exists", row.isPresent());
        row.ifPresent(r -> {
            m.put("version", r.serverVersion());
            m.put("values", values(schema, r.payload()));
        });
        m.put("scopes", views.rowScopes(partition, table, rowId));
        m.put("blobs", views.rowBlobs(partition, table, rowId));
        m.put("history", history);
        return json(m).build();
    }

    private static Map<String, Object> values(TableSchema table, byte[] payload) {
        List<ColumnDescriptor> columns = table.descriptors();
        Object[] decoded = RowCodec.decode(columns, payload);
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
            Object v = decoded[i];
            out.put(columns.get(i).name(), v instanceof byte[] b ? Base64.getEncoder().encodeToString(b) : v);
        }
        return out;
    }

    /** Scope values of a partition's retained log, most recently written first. */
    @GET
    @Path("partitions/{partition}/scopes")
    public Response scopes(@PathParam("partition") String partition, @QueryParam("limit") Integer limit) {
        views.partition(partition).orElseThrow(() -> unknownPartition(partition));
        List<Map<String, Object>> out = new ArrayList<>();
        for (OperatorViews.ScopeActivity a : views.scopeActivity(partition, limit(limit, 100))) {
            out.add(Map.of("table", a.table(), "variable", a.variable(), "value", a.value(), "commits", a.commits(),
                    "lastCommitSeq", a.lastCommitSeq()));
        }
        return json(Map.of("partition", partition, "scopes", out)).build();
    }

    /** This node's requests and pushes per second over the last {@code window} seconds (default 60). */
    @GET
    @Path("metrics")
    public Response metrics(@QueryParam("window") Integer window) {
        int seconds = window == null ? 60 : window;
        if (seconds < 1 || seconds > RateWindow.SECONDS) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "window must be 1.." + RateWindow.SECONDS);
        }
        return json(telemetry.rates().snapshot(parts().clock().nowMs(), seconds)).build();
    }

    /** The audited operator actions, newest first. */
    @GET
    @Path("audit")
    public Response audit(@QueryParam("limit") Integer limit) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (AuditEntry a : views.audit(limit(limit, 100))) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("atMs", a.atMs());
            m.put("operator", a.operator());
            m.put("action", a.action());
            m.put("partition", a.partition());
            m.put("target", a.target());
            m.put("outcome", a.outcome());
            m.put("detail", a.detail());
            out.add(m);
        }
        return json(Map.of("actions", out)).build();
    }

    // ------------------------------------------------------------------ actions

    /** Prunes the partition's log now with the configured retention policy (SPEC §4.6). */
    @POST
    @Path("partitions/{partition}/prune")
    public Response prune(@PathParam("partition") String partition, @Context SecurityContext security,
                          @Context HttpHeaders headers) {
        return act(security, headers, "prune", partition, partition, parts -> {
            views.partition(partition).orElseThrow(() -> unknownPartition(partition));
            CommitPruneResult r = pruning.prune(parts, parts.config().retention().policy(), partition, "operator");
            return Map.of("previousHorizonSeq", r.previousHorizonSeq(), "horizonSeq", r.horizonSeq(),
                    "removedCommits", r.removedCommits());
        });
    }

    /** Rotates the partition's log epoch (SPEC §2.1, after a restore): every client resets on its next round. */
    @POST
    @Path("partitions/{partition}/rotate-epoch")
    public Response rotateEpoch(@PathParam("partition") String partition, @Context SecurityContext security,
                                @Context HttpHeaders headers) {
        return act(security, headers, "rotate-epoch", partition, partition, parts -> {
            List<PartitionRegistryEntry> rotated = LogEpochs.rotateAfterRestore(parts.storage(), parts.clock(),
                    partition);
            return Map.of("logEpoch", rotated.get(0).logEpoch());
        });
    }

    /** Closes this node's sockets of the client (1012: it reconnects and re-authenticates). */
    @POST
    @Path("partitions/{partition}/clients/{clientId}/disconnect")
    public Response disconnect(@PathParam("partition") String partition, @PathParam("clientId") String clientId,
                               @Context SecurityContext security, @Context HttpHeaders headers) {
        return act(security, headers, "disconnect", partition, clientId, parts -> Map.of("closedSockets",
                realtime.runningHub().map(h -> h.disconnect(partition, clientId)).orElse(0)));
    }

    /**
     * Pauses an RFC 0007 backfill on every node (a paused checkpoint is not claimed: no batch, no activation).
     * Serving is unchanged: processes that wait for this checkpoint keep refusing until it activates.
     */
    @POST
    @Path("partitions/{partition}/checkpoints/{name}/pause")
    public Response pauseBackfill(@PathParam("partition") String partition, @PathParam("name") String name,
                                  @Context SecurityContext security, @Context HttpHeaders headers) {
        return act(security, headers, "pause-backfill", partition, name, parts -> {
            pending(parts.storage().setCheckpointPaused(partition, name, parts.clock().nowMs()), partition, name);
            return Map.of("paused", true);
        });
    }

    @POST
    @Path("partitions/{partition}/checkpoints/{name}/resume")
    public Response resumeBackfill(@PathParam("partition") String partition, @PathParam("name") String name,
                                   @Context SecurityContext security, @Context HttpHeaders headers) {
        return act(security, headers, "resume-backfill", partition, name, parts -> {
            pending(parts.storage().setCheckpointPaused(partition, name, null), partition, name);
            return Map.of("paused", false);
        });
    }

    /** One batch of the backfill now on this node (and its activation if the pass ends); a failure is answered. */
    @POST
    @Path("partitions/{partition}/checkpoints/{name}/retry")
    public Response retryBackfill(@PathParam("partition") String partition, @PathParam("name") String name,
                                  @Context SecurityContext security, @Context HttpHeaders headers) {
        return act(security, headers, "retry-backfill", partition, name, parts -> {
            syncular.jakarta.migration.BackfillRunner.Tick t = parts.backfill().retry(partition, name)
                    .orElseThrow(() -> new SyncException(ErrorCode.SYNC_NOT_FOUND, "this node declares no pending "
                            + "checkpoint " + name + " in partition " + partition));
            return Map.of("batches", t.batches(), "skipped", t.skipped(), "activated", t.activated(),
                    "stale", t.stale(), "unverifiable", t.unverifiable());
        });
    }

    private static void pending(boolean found, String partition, String name) {
        if (!found) {
            throw new SyncException(ErrorCode.SYNC_NOT_FOUND, "no pending checkpoint " + name + " in partition "
                    + partition + " (unknown, or already activated)");
        }
    }

    private interface Action {
        Map<String, Object> run(SyncRuntime.Parts parts);
    }

    /** CSRF check, the action, then its audit record and event whatever the outcome. */
    private Response act(SecurityContext security, HttpHeaders headers, String action, String partition,
                         String target, Action work) {
        requireCsrf(headers);
        SyncRuntime.Parts parts = parts();
        String operator = security.getUserPrincipal().getName();
        String outcome = "failed";
        String detail = null;
        try {
            Map<String, Object> result = work.run(parts);
            outcome = "ok";
            detail = Json.write(result);
            Map<String, Object> body = new LinkedHashMap<>(result);
            body.put("action", action);
            body.put("partition", partition);
            body.put("target", target);
            return json(body).build();
        } catch (SyncException e) {
            detail = e.code().wire() + ": " + e.getMessage();
            throw e;
        } catch (RuntimeException e) {
            detail = e.getClass().getSimpleName();
            throw e;
        } finally {
            long now = parts.clock().nowMs();
            LOG.log(System.Logger.Level.INFO, "operator {0}: {1} {2}/{3} {4}", operator, action, partition, target,
                    outcome);
            telemetry.events().emit(new ServerEvent.OperatorAction(now, partition, operator, action, target, outcome,
                    detail));
            parts.audit().record(new AuditLog.Entry(now, operator, action, partition, target, outcome, detail));
        }
    }

    /**
     * The double-submitted token: the header must equal the cookie {@code GET session} set. A page of another
     * origin can make the browser send the cookie, but can neither read it nor set the header. An {@code Origin}
     * naming another host is refused too.
     */
    static void requireCsrf(HttpHeaders headers) {
        String origin = headers.getHeaderString("Origin");
        String host = headers.getHeaderString("Host");
        if (origin != null && !"null".equals(origin) && host != null) {
            String originHost = origin.replaceFirst("^[a-zA-Z][a-zA-Z0-9+.-]*://", "").replaceAll("/.*$", "");
            if (!originHost.equalsIgnoreCase(host)) throw csrf("the request comes from another origin");
        }
        jakarta.ws.rs.core.Cookie cookie = headers.getCookies().get(CSRF_COOKIE);
        String sent = headers.getHeaderString(CSRF_HEADER);
        if (cookie == null || sent == null || sent.length() < 16
                || !java.security.MessageDigest.isEqual(cookie.getValue().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        sent.getBytes(java.nio.charset.StandardCharsets.UTF_8))) {
            throw csrf("an action needs the " + CSRF_HEADER + " header equal to the token of GET admin/console/session");
        }
    }

    private static SyncException csrf(String message) {
        return new SyncException(ErrorCode.SYNC_FORBIDDEN, message, "{\"reason\":\"csrf\"}");
    }

    private SyncRuntime.Parts parts() {
        return runtime.parts().orElseThrow(() -> new SyncException(ErrorCode.SYNC_SCHEMA_NOT_READY,
                "the server is starting or its database is unreachable", "{}"));
    }

    private static SyncException unknownPartition(String partition) {
        return new SyncException(ErrorCode.SYNC_NOT_FOUND, "no partition " + partition);
    }

    private static int limit(Integer requested, int fallback) {
        int n = requested == null ? fallback : requested;
        if (n < 1 || n > OperatorViews.MAX_LIMIT) {
            throw new SyncException(ErrorCode.SYNC_INVALID_REQUEST, "limit must be 1.." + OperatorViews.MAX_LIMIT);
        }
        return n;
    }

    private static Response.ResponseBuilder json(Object body) {
        return Response.ok(Json.write(body), MediaType.APPLICATION_JSON).header("Cache-Control", "no-store");
    }
}

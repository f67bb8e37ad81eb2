package syncular.jakarta.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.host.AuthorityUnavailable;
import syncular.jakarta.host.Identity;
import syncular.jakarta.host.ScopeResolver;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.storage.Reads;
import syncular.jakarta.storage.TestSchemas;
import syncular.jakarta.storage.postgres.EmbeddedPostgresSupport;
import syncular.jakarta.storage.postgres.JdbcTransactionRunner;
import syncular.jakarta.storage.postgres.PostgresLeaseStore;
import syncular.jakarta.storage.postgres.PostgresServerStorage;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Lease;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * SPEC §7.3 through the handler, on PostgreSQL: the LEASE frame of authorized rounds, the sliding refresh, rounds
 * served from the lease during an outage, and the request-level lease errors.
 */
class LeasesTest {
    private static final CompiledSchema SCHEMA = TestSchemas.tasks(1);
    private static final long TTL = 900_000L;
    private static final Map<String, List<String>> P1 = Map.of("project_id", List.of("p1"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresServerStorage storage;
    private static PostgresLeaseStore leaseStore;

    private final AtomicLong now = new AtomicLong(1_000_000L);
    /** What the resolver does: a scope map, or null for an outage. */
    private final AtomicReference<Map<String, List<String>>> live = new AtomicReference<>(P1);
    private final ScopeResolver resolver = identity -> {
        Map<String, List<String>> allowed = live.get();
        if (allowed == null) throw new AuthorityUnavailable("the permissions service is down");
        return allowed;
    };

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        storage = new PostgresServerStorage(db, new JdbcTransactionRunner(db), () -> 1_000L);
        storage.ensureSchema(SCHEMA, List.of());
        leaseStore = new PostgresLeaseStore(db, "lease signing key, thirty-two by".getBytes());
        leaseStore.install();
    }

    @AfterAll
    static void close() { db.close(); }

    private SyncHandler handler(Leases leases) {
        return new SyncHandler(storage, () -> SCHEMA, List::of, resolver, now::get, SyncSettings.DEFAULTS,
                (request, bytes) -> {
                    throw new AssertionError("no segment is published here");
                }, Validation.NONE, leases);
    }

    private static RequestMessage round(String clientId, String rowId) {
        PullHeader pull = new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS);
        Subscription sub = new Subscription("s", "tasks", P1, null, -1, null);
        if (rowId == null) return new RequestMessage(1, List.of(new ReqHeader(clientId, 1), pull, sub));
        return new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                new PushCommit("k-" + rowId, List.of(PushCommit.Operation.upsert("tasks", rowId, null,
                        TestSchemas.taskPayload(SCHEMA, rowId, "p1", "title", false)))), pull, sub));
    }

    private static List<ResponseFrame> frames(SyncHandler.Handled handled) { return handled.response().frames(); }

    @Test
    void anAuthorizedRoundCarriesTheLeaseRightAfterRespHeaderAndARefreshSlidesIt() {
        SyncHandler h = handler(new Leases(leaseStore, TTL));
        Identity a = new Identity("actor-a", EmbeddedPostgresSupport.partition("lease-issue"));
        List<ResponseFrame> first = frames(h.handle(a, round("c1", "t1")));
        assertInstanceOf(RespHeader.class, first.get(0));
        Lease lease1 = assertInstanceOf(Lease.class, first.get(1), "LEASE follows RESP_HEADER");
        assertInstanceOf(PushResult.class, first.get(2));
        assertEquals(1, first.stream().filter(f -> f instanceof Lease).count());
        assertEquals(now.get() + TTL, lease1.expiresAtMs());

        now.addAndGet(60_000L);
        Lease lease2 = assertInstanceOf(Lease.class, frames(h.handle(a, round("c1", null))).get(1));
        assertEquals(lease1.leaseId(), lease2.leaseId(), "a refresh slides the same handle");
        assertEquals(lease1.expiresAtMs() + 60_000L, lease2.expiresAtMs());
    }

    @Test
    void duringAnOutageTheLeaseAuthorizesWithoutRefreshUntilItExpires() {
        SyncHandler h = handler(new Leases(leaseStore, TTL));
        Identity a = new Identity("actor-a", EmbeddedPostgresSupport.partition("lease-outage"));
        Lease issued = assertInstanceOf(Lease.class, frames(h.handle(a, round("c1", null))).get(1));

        live.set(null);
        now.addAndGet(TTL - 1);
        List<ResponseFrame> served = frames(h.handle(a, round("c1", "t-offline")));
        assertTrue(served.stream().noneMatch(f -> f instanceof Lease), "an outage-served round refreshes nothing");
        assertEquals(PushResult.Status.APPLIED, assertInstanceOf(PushResult.class, served.get(1)).status());
        assertEquals(SubStart.Status.ACTIVE, served.stream().filter(f -> f instanceof SubStart)
                .map(f -> ((SubStart) f).status()).findFirst().orElseThrow(), "pulls run on the leased scopes");
        assertTrue(Reads.row(storage, a.partition(), "tasks", "t-offline").isPresent());

        now.addAndGet(1);   // now == expiresAtMs: invalid (§7.3.1)
        SyncException expired = assertThrows(SyncException.class, () -> h.handle(a, round("c1", "t-late")));
        assertEquals(ErrorCode.SYNC_AUTH_LEASE_REQUIRED, expired.code());
        assertTrue(Reads.row(storage, a.partition(), "tasks", "t-late").isEmpty(), "nothing of the failed round landed");

        live.set(P1);
        Lease renewed = assertInstanceOf(Lease.class, frames(h.handle(a, round("c1", "t-late"))).get(1));
        assertEquals(issued.leaseId(), renewed.leaseId(), "an expired, unrevoked lease slides on a live round");
    }

    @Test
    void aRevokedLeaseFailsTheOutageRoundAndTheNextLiveRoundMintsAFreshOne() {
        Leases leases = new Leases(leaseStore, TTL);
        SyncHandler h = handler(leases);
        Identity a = new Identity("actor-a", EmbeddedPostgresSupport.partition("lease-revoked"));
        Lease issued = assertInstanceOf(Lease.class, frames(h.handle(a, round("c1", null))).get(1));
        leases.revoke(a.partition(), issued.leaseId());
        assertEquals(ErrorCode.SYNC_NOT_FOUND, assertThrows(SyncException.class,
                () -> leases.revoke(a.partition(), "lease_nobody")).code());

        live.set(null);
        assertEquals(ErrorCode.SYNC_AUTH_LEASE_REVOKED,
                assertThrows(SyncException.class, () -> h.handle(a, round("c1", "t-blocked"))).code());
        assertTrue(Reads.row(storage, a.partition(), "tasks", "t-blocked").isEmpty());

        live.set(P1);
        Lease fresh = assertInstanceOf(Lease.class, frames(h.handle(a, round("c1", "t-blocked"))).get(1));
        assertNotEquals(issued.leaseId(), fresh.leaseId(), "the revoked handle never resurrects");
    }

    @Test
    void anOutageWithoutAUsableLeaseIsLeaseRequired() {
        SyncHandler h = handler(new Leases(leaseStore, TTL));
        String partition = EmbeddedPostgresSupport.partition("lease-none");
        Identity a = new Identity("actor-a", partition);
        h.handle(a, round("c1", null));
        live.set(null);
        assertEquals(ErrorCode.SYNC_AUTH_LEASE_REQUIRED,
                assertThrows(SyncException.class, () -> h.handle(a, round("c-never-leased", null))).code(),
                "no lease for this client");
        // the client record binds c1 to actor-a first (§1.5); a lease of another actor is reachable once the
        // records are gone, as after a log-epoch rotation
        leaseStore.issue(partition, "c-unrecorded", "actor-a", P1, now.get(), TTL);
        assertEquals(ErrorCode.SYNC_AUTH_LEASE_REQUIRED, assertThrows(SyncException.class,
                () -> h.handle(new Identity("actor-b", partition), round("c-unrecorded", null))).code(),
                "another actor's lease authorizes nothing");
        assertEquals(ErrorCode.SYNC_AUTH_LEASE_REQUIRED,
                assertThrows(SyncException.class, () -> handler(Leases.OFF).handle(a, round("c1", null))).code(),
                "leases off: an outage has nothing to fall back on");
    }

    @Test
    void withLeasesOffNoFrameIsSentAndAFailingResolverNeverReachesALease() {
        Identity a = new Identity("actor-a", EmbeddedPostgresSupport.partition("lease-off"));
        assertTrue(frames(handler(Leases.OFF).handle(a, round("c1", null))).stream()
                .noneMatch(f -> f instanceof Lease));

        SyncHandler on = handler(new Leases(leaseStore, TTL));
        on.handle(a, round("c1", null));
        ScopeResolver failing = identity -> {
            throw new IllegalStateException("the permissions service answered garbage");
        };
        SyncHandler broken = new SyncHandler(storage, () -> SCHEMA, List::of, failing, now::get,
                SyncSettings.DEFAULTS, (request, bytes) -> {
                    throw new AssertionError("no segment is published here");
                }, Validation.NONE, new Leases(leaseStore, TTL));
        List<ResponseFrame> failed = frames(broken.handle(a, round("c1", null)));
        assertTrue(failed.stream().noneMatch(f -> f instanceof Lease), "a failed resolution issues nothing");
        assertEquals(SubStart.Status.REVOKED, failed.stream().filter(f -> f instanceof SubStart)
                .map(f -> ((SubStart) f).status()).findFirst().orElseThrow(), "a throw fails closed (§3.2 rule 5)");
    }
}

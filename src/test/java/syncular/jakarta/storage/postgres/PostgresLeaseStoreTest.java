package syncular.jakarta.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import syncular.jakarta.storage.StoredLease;

/** SPEC §7.3.1/§7.3.3/§7.3.4 lease records in PostgreSQL: sliding refresh, revocation, and signatures at rest. */
class PostgresLeaseStoreTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes();
    private static final Map<String, List<String>> P1 = Map.of("project_id", List.of("p1"));
    private static EmbeddedPostgresSupport.Pool db;
    private static PostgresLeaseStore store;

    @BeforeAll
    static void database() {
        db = EmbeddedPostgresSupport.newDatabase();
        store = new PostgresLeaseStore(db, KEY);
        store.install();
    }

    @AfterAll
    static void close() { db.close(); }

    private static void sql(String statement, Object... args) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(statement)) {
            for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
            ps.executeUpdate();
        }
    }

    @Test
    void aRefreshSlidesTheSameLeaseAndRecapturesTheScopes() {
        String p = EmbeddedPostgresSupport.partition("lease-slide");
        StoredLease first = store.issue(p, "c1", "actor-a", P1, 1_000L, 900_000L);
        assertEquals(901_000L, first.expiresAtMs());
        StoredLease second = store.issue(p, "c1", "actor-a", Map.of("project_id", List.of("p1", "p2")), 61_000L,
                900_000L);
        assertEquals(first.leaseId(), second.leaseId(), "a refresh never mints a new handle");
        StoredLease stored = store.get(p, "c1").orElseThrow();
        assertEquals(961_000L, stored.expiresAtMs());
        assertEquals(61_000L, stored.issuedAtMs());
        assertEquals(List.of("p1", "p2"), stored.allowedScopes().get("project_id"));
        assertFalse(stored.revoked());
        assertNotEquals(first.leaseId(), store.issue(p, "c2", "actor-a", P1, 1_000L, 900_000L).leaseId(),
                "each client its own lease");
        assertTrue(store.get(EmbeddedPostgresSupport.partition("lease-other"), "c1").isEmpty(),
                "a lease belongs to its partition");
    }

    @Test
    void aRevokedLeaseStaysRevokedAndTheNextIssueMintsAFreshId() {
        String p = EmbeddedPostgresSupport.partition("lease-revoke");
        StoredLease issued = store.issue(p, "c1", "actor-a", P1, 1_000L, 900_000L);
        assertFalse(store.revoke(p, "lease_unknown"));
        assertFalse(store.revoke(EmbeddedPostgresSupport.partition("lease-elsewhere"), issued.leaseId()),
                "revocation is per partition");
        assertTrue(store.revoke(p, issued.leaseId()));
        assertTrue(store.get(p, "c1").orElseThrow().revoked());

        StoredLease fresh = store.issue(p, "c1", "actor-a", P1, 2_000L, 900_000L);
        assertNotEquals(issued.leaseId(), fresh.leaseId(), "a revoked handle never resurrects");
        assertFalse(store.get(p, "c1").orElseThrow().revoked());
        assertFalse(store.revoke(p, issued.leaseId()), "the revoked id is gone for good");
    }

    @Test
    void anotherActorOnTheSameClientIdGetsItsOwnLease() {
        String p = EmbeddedPostgresSupport.partition("lease-actor");
        StoredLease a = store.issue(p, "c1", "actor-a", P1, 1_000L, 900_000L);
        StoredLease b = store.issue(p, "c1", "actor-b", P1, 2_000L, 900_000L);
        assertNotEquals(a.leaseId(), b.leaseId());
        assertEquals("actor-b", store.get(p, "c1").orElseThrow().actorId());
    }

    @Test
    void aRecordEditedInTheDatabaseFailsItsSignatureAndReadsAsAbsent() throws Exception {
        String p = EmbeddedPostgresSupport.partition("lease-tamper");
        store.issue(p, "c1", "actor-a", P1, 1_000L, 900_000L);
        sql("UPDATE sync_leases SET expires_at_ms = expires_at_ms + 86400000 WHERE partition = ?", p);
        assertTrue(store.get(p, "c1").isEmpty(), "a stretched expiry authorizes nothing");

        store.issue(p, "c2", "actor-a", P1, 1_000L, 900_000L);
        sql("UPDATE sync_leases SET allowed_scopes = '{\"project_id\":[\"*\"]}' WHERE partition = ? AND client_id = ?",
                p, "c2");
        assertTrue(store.get(p, "c2").isEmpty(), "a widened scope map authorizes nothing");

        StoredLease c3 = store.issue(p, "c3", "actor-a", P1, 1_000L, 900_000L);
        assertTrue(store.revoke(p, c3.leaseId()));
        sql("UPDATE sync_leases SET revoked = false WHERE partition = ? AND client_id = ?", p, "c3");
        assertTrue(store.get(p, "c3").isEmpty(), "un-revoking by hand does not bring the lease back");

        PostgresLeaseStore otherKey = new PostgresLeaseStore(db, "another key of thirty-two bytes!!".getBytes());
        store.issue(p, "c4", "actor-a", P1, 1_000L, 900_000L);
        assertTrue(otherKey.get(p, "c4").isEmpty(), "a record signed under another key is not trusted");
        assertTrue(store.get(p, "c4").isPresent());
    }

    @Test
    void concurrentRefreshesOfOneClientAgreeOnOneLease() throws Exception {
        String p = EmbeddedPostgresSupport.partition("lease-race");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<StoredLease>> issued = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                long now = 1_000L + i;
                issued.add(pool.submit(() -> store.issue(p, "c1", "actor-a", P1, now, 900_000L)));
            }
            Set<String> ids = new HashSet<>();
            for (Future<StoredLease> f : issued) ids.add(f.get().leaseId());
            assertEquals(1, ids.size(), "one handle for the client whatever the interleaving: " + ids);
            assertEquals(ids.iterator().next(), store.get(p, "c1").orElseThrow().leaseId());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aShortKeyIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new PostgresLeaseStore(db, new byte[16]));
    }
}

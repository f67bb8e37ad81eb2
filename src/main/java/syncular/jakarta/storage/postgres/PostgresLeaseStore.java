package syncular.jakarta.storage.postgres;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.sql.DataSource;
import syncular.jakarta.storage.LeaseStore;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StoredLease;
import syncular.jakarta.wire.Json;

/**
 * {@link LeaseStore} in PostgreSQL: {@code sync_leases}, one row per (partition, clientId), each signed with
 * HMAC-SHA256 under the server's lease key ({@code syncular.leases.signing-key}) over every field a reader trusts.
 * A row whose signature does not verify reads as absent, so a hand-edited expiry or scope map never authorizes a
 * round. Revocation sets {@code revoked} and destroys the signature, so flipping the flag back cannot resurrect the
 * lease. Statements run in autocommit on their own connection: an issue is a read and one conditional write (retried
 * when a concurrent refresh or revocation changed the row between them), a revocation one update.
 */
public final class PostgresLeaseStore implements LeaseStore {
    private static final System.Logger LOG = System.getLogger(PostgresLeaseStore.class.getName());

    static final List<String> DDL = List.of("""
            CREATE TABLE IF NOT EXISTS sync_leases(
              partition TEXT NOT NULL,
              client_id TEXT NOT NULL,
              lease_id TEXT NOT NULL,
              actor_id TEXT NOT NULL,
              allowed_scopes TEXT NOT NULL,
              issued_at_ms BIGINT NOT NULL,
              expires_at_ms BIGINT NOT NULL,
              revoked BOOLEAN NOT NULL,
              signature TEXT NOT NULL,
              PRIMARY KEY(partition, client_id)
            )""",
            "CREATE INDEX IF NOT EXISTS sync_leases_by_id ON sync_leases(partition, lease_id)");

    private static final String GET = "SELECT lease_id, actor_id, allowed_scopes, issued_at_ms, expires_at_ms, revoked,"
            + " signature FROM sync_leases WHERE partition = ? AND client_id = ?";
    private static final String INSERT = "INSERT INTO sync_leases(partition, client_id, lease_id, actor_id,"
            + " allowed_scopes, issued_at_ms, expires_at_ms, revoked, signature) VALUES (?,?,?,?,?,?,?,false,?)"
            + " ON CONFLICT DO NOTHING";
    private static final String REFRESH = "UPDATE sync_leases SET lease_id = ?, actor_id = ?, allowed_scopes = ?,"
            + " issued_at_ms = ?, expires_at_ms = ?, revoked = false, signature = ?"
            + " WHERE partition = ? AND client_id = ? AND lease_id = ? AND revoked = ?";
    private static final String REVOKE = "UPDATE sync_leases SET revoked = true, signature = ''"
            + " WHERE partition = ? AND lease_id = ?";
    /** A read-then-write loses only to a concurrent write of the same client's lease; a few tries settle it. */
    private static final int ATTEMPTS = 5;

    private final OwnTables tables;
    private final SecretKeySpec key;

    /** {@code signingKey}: at least 32 bytes; every node of a deployment must use the same. */
    public PostgresLeaseStore(DataSource dataSource, byte[] signingKey) {
        if (signingKey.length < 32) throw new IllegalArgumentException("a lease signing key has at least 32 bytes");
        this.tables = new OwnTables(dataSource, DDL);
        this.key = new SecretKeySpec(signingKey.clone(), "HmacSHA256");
    }

    @Override
    public Optional<StoredLease> get(String partition, String clientId) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(GET)) {
                ps.setString(1, partition);
                ps.setString(2, clientId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) return Optional.empty();
                    String leaseId = rs.getString(1);
                    String actorId = rs.getString(2);
                    String scopes = rs.getString(3);
                    long issued = rs.getLong(4);
                    long expires = rs.getLong(5);
                    boolean revoked = rs.getBoolean(6);
                    if (!revoked && !MessageDigest.isEqual(
                            sign(partition, clientId, leaseId, actorId, scopes, issued, expires)
                                    .getBytes(StandardCharsets.US_ASCII),
                            rs.getString(7).getBytes(StandardCharsets.US_ASCII))) {
                        LOG.log(System.Logger.Level.WARNING, "the auth lease of client {0} in partition {1} fails"
                                + " its signature check and is ignored", clientId, partition);
                        return Optional.empty();
                    }
                    return Optional.of(new StoredLease(leaseId, actorId, parseScopes(scopes), issued, expires,
                            revoked));
                }
            }
        });
    }

    @Override
    public StoredLease issue(String partition, String clientId, String actorId,
                             Map<String, List<String>> allowedScopes, long nowMs, long ttlMs) {
        String scopes = Json.write(new TreeMap<>(allowedScopes));
        long expires = Math.addExact(nowMs, ttlMs);
        return run(c -> {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                String storedId = null;
                String storedActor = null;
                boolean storedRevoked = false;
                try (PreparedStatement ps = c.prepareStatement(GET)) {
                    ps.setString(1, partition);
                    ps.setString(2, clientId);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) {
                            storedId = rs.getString(1);
                            storedActor = rs.getString(2);
                            storedRevoked = rs.getBoolean(6);
                        }
                    }
                }
                boolean reuse = storedId != null && !storedRevoked && storedActor.equals(actorId);
                String leaseId = reuse ? storedId : "lease_" + UUID.randomUUID();
                String signature = sign(partition, clientId, leaseId, actorId, scopes, nowMs, expires);
                int written;
                if (storedId == null) {
                    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
                        ps.setString(1, partition);
                        ps.setString(2, clientId);
                        ps.setString(3, leaseId);
                        ps.setString(4, actorId);
                        ps.setString(5, scopes);
                        ps.setLong(6, nowMs);
                        ps.setLong(7, expires);
                        ps.setString(8, signature);
                        written = ps.executeUpdate();
                    }
                } else {
                    try (PreparedStatement ps = c.prepareStatement(REFRESH)) {
                        ps.setString(1, leaseId);
                        ps.setString(2, actorId);
                        ps.setString(3, scopes);
                        ps.setLong(4, nowMs);
                        ps.setLong(5, expires);
                        ps.setString(6, signature);
                        ps.setString(7, partition);
                        ps.setString(8, clientId);
                        ps.setString(9, storedId);
                        ps.setBoolean(10, storedRevoked);
                        written = ps.executeUpdate();
                    }
                }
                if (written == 1) return new StoredLease(leaseId, actorId, allowedScopes, nowMs, expires, false);
            }
            throw new StorageException(StorageErrorCode.UNCLASSIFIED,
                    Map.of("reason", "the lease of a client changed under every attempt to refresh it"));
        });
    }

    @Override
    public boolean revoke(String partition, String leaseId) {
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement(REVOKE)) {
                ps.setString(1, partition);
                ps.setString(2, leaseId);
                return ps.executeUpdate() > 0;
            }
        });
    }

    /** Creates the lease table if absent; called once at start so concurrent first requests never race on DDL. */
    public void install() { tables.install(); }

    private <T> T run(OwnTables.Work<T> work) { return tables.run(work); }

    private String sign(String partition, String clientId, String leaseId, String actorId, String scopes,
                        long issuedAtMs, long expiresAtMs) {
        // NUL never occurs in PostgreSQL text, so the joined fields cannot be re-cut into different ones
        String text = String.join("\u0000", partition, clientId, leaseId, actorId, scopes,
                Long.toString(issuedAtMs), Long.toString(expiresAtMs));
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return HexFormat.of().formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    private static Map<String, List<String>> parseScopes(String json) {
        Map<String, List<String>> out = new TreeMap<>();
        ((Map<?, ?>) Json.parse(json)).forEach((k, v) ->
                out.put((String) k, ((List<?>) v).stream().map(String.class::cast).toList()));
        return out;
    }
}

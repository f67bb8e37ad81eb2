package syncular.jakarta.host;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Built-in bearer-token authentication ({@code syncular.auth.mode=jwt}): a JWS compact token verified with Nimbus
 * JOSE+JWT against one configured key, HS256 (shared secret) or RS256 (public key). The token must name the
 * expected algorithm, carry an unexpired {@code exp} (give or take {@code clockSkewMs}, default 5 s), and the
 * configured issuer/audience when set.
 * The actor comes from {@code actorClaim}, the partition from {@code partitionClaim} (or a configured default),
 * and the allowed scopes (§3.2) from {@code scopesClaim}: an object of variable → list of values or {@code "*"}.
 * Any failure is an empty answer (401), never an exception. The identity carries the token's expiry ({@code exp}
 * plus the same skew), so a WebSocket authenticated with it closes when an HTTP request with it would be refused.
 */
public final class JwtAuthenticator implements Authenticator {
    /**
     * The default of {@code syncular.auth.jwt.clock-skew-ms}: room for the issuer's and this server's clocks to
     * disagree, small enough that a token that expired seconds ago no longer writes (issue 13).
     */
    public static final long DEFAULT_CLOCK_SKEW_MS = 5_000;

    /**
     * Configuration; exactly one of {@code hs256Secret} / {@code rs256PublicKeyPem} is set. {@code clockSkewMs}: how
     * far past {@code exp} (and before {@code nbf}) a token is still accepted.
     */
    public record Settings(byte[] hs256Secret, String rs256PublicKeyPem, String issuer, String audience,
                           String actorClaim, String partitionClaim, String defaultPartition, String scopesClaim,
                           long clockSkewMs) { }

    private final Settings settings;
    private final JWSAlgorithm algorithm;
    private final JWSVerifier verifier;
    private final Clock clock;

    public JwtAuthenticator(Settings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
        try {
            if (settings.hs256Secret() != null) {
                algorithm = JWSAlgorithm.HS256;
                verifier = new MACVerifier(settings.hs256Secret()); // refuses secrets shorter than 256 bits
            } else {
                algorithm = JWSAlgorithm.RS256;
                verifier = new RSASSAVerifier(rsaPublicKey(settings.rs256PublicKeyPem()));
            }
        } catch (JOSEException | RuntimeException e) {
            throw new IllegalArgumentException("the JWT verification key is not usable: " + e.getMessage(), e);
        }
    }

    /** Parses a PEM (or bare base64) X.509 SubjectPublicKeyInfo RSA key. */
    static RSAPublicKey rsaPublicKey(String pem) {
        String b64 = pem.replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");
        try {
            return (RSAPublicKey) KeyFactory.getInstance("RSA")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(b64)));
        } catch (java.security.GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a PEM RSA public key", e);
        }
    }

    @Override
    public Optional<Identity> authenticate(Credentials credentials) {
        Optional<String> token = credentials.bearerToken();
        if (token.isEmpty()) return Optional.empty();
        try {
            SignedJWT jwt = SignedJWT.parse(token.get());
            if (!algorithm.equals(jwt.getHeader().getAlgorithm()) || !jwt.verify(verifier)) return Optional.empty();
            JWTClaimsSet claims = jwt.getJWTClaimsSet();
            long now = clock.nowMs();
            Date exp = claims.getExpirationTime();
            if (exp == null || exp.getTime() + settings.clockSkewMs() <= now) return Optional.empty();
            Date nbf = claims.getNotBeforeTime();
            if (nbf != null && nbf.getTime() - settings.clockSkewMs() > now) return Optional.empty();
            if (settings.issuer() != null && !settings.issuer().equals(claims.getIssuer())) return Optional.empty();
            if (settings.audience() != null && (claims.getAudience() == null
                    || !claims.getAudience().contains(settings.audience()))) {
                return Optional.empty();
            }
            String actor = claims.getStringClaim(settings.actorClaim());
            String partition = settings.partitionClaim() == null ? null : claims.getStringClaim(settings.partitionClaim());
            if (partition == null) partition = settings.defaultPartition();
            if (actor == null || actor.isEmpty() || partition == null || partition.isEmpty()) return Optional.empty();
            // the instant this authenticator starts refusing the token: a socket must not outlive that (Identity)
            return Optional.of(new Identity(actor, partition, scopes(claims.getClaim(settings.scopesClaim())),
                    exp.getTime() + settings.clockSkewMs()));
        } catch (ParseException | JOSEException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The scopes claim as a scope map; a malformed claim grants nothing. */
    private static Map<String, List<String>> scopes(Object claim) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (!(claim instanceof Map<?, ?> m)) return out;
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (e.getValue() instanceof List<?> l && l.stream().allMatch(v -> v instanceof String)) {
                out.put(String.valueOf(e.getKey()), l.stream().map(String.class::cast).toList());
            } else if (e.getValue() instanceof String s) {
                out.put(String.valueOf(e.getKey()), List.of(s));
            }
        }
        return out;
    }
}

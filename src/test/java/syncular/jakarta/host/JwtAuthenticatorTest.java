package syncular.jakarta.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class JwtAuthenticatorTest {
    static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    static final long NOW = 1_782_993_600_000L;
    static final Clock CLOCK = () -> NOW;

    static JwtAuthenticator.Settings hs(String issuer) {
        return new JwtAuthenticator.Settings(SECRET, null, issuer, null, "sub", "partition", "fallback", "scopes",
                JwtAuthenticator.DEFAULT_CLOCK_SKEW_MS);
    }

    static String hsToken(JWTClaimsSet claims, byte[] key) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        jwt.sign(new MACSigner(key));
        return jwt.serialize();
    }

    static JWTClaimsSet.Builder claims() {
        return new JWTClaimsSet.Builder().subject("alice").claim("partition", "tenant-1")
                .claim("scopes", Map.of("project_id", List.of("p1", "p2"))).expirationTime(new Date(NOW + 60_000));
    }

    static Credentials bearer(String token) {
        return new Credentials() {
            @Override public Optional<String> header(String name) {
                return name.equalsIgnoreCase("Authorization") ? Optional.of("Bearer " + token) : Optional.empty();
            }
            @Override public Optional<String> queryParameter(String name) { return Optional.empty(); }
        };
    }

    @Test
    void aValidHs256TokenNamesActorPartitionAndGrantedScopes() throws Exception {
        Identity id = new JwtAuthenticator(hs(null), CLOCK).authenticate(bearer(hsToken(claims().build(), SECRET)))
                .orElseThrow();
        // the identity lapses when this authenticator would start refusing the token: exp plus the skew
        assertEquals(new Identity("alice", "tenant-1", Map.of("project_id", List.of("p1", "p2")),
                NOW + 60_000 + JwtAuthenticator.DEFAULT_CLOCK_SKEW_MS), id);
        assertTrue(!id.expiredAt(NOW + 60_000 + JwtAuthenticator.DEFAULT_CLOCK_SKEW_MS - 1) && id.expiredAt(NOW + 120_000));
        Identity fallback = new JwtAuthenticator(hs(null), CLOCK)
                .authenticate(bearer(hsToken(claims().claim("partition", null).build(), SECRET))).orElseThrow();
        assertEquals("fallback", fallback.partition());
    }

    @Test
    void refusesBadSignaturesExpiredTokensWrongIssuersAndMissingActors() throws Exception {
        JwtAuthenticator auth = new JwtAuthenticator(hs("https://issuer.example"), CLOCK);
        byte[] other = "another-secret-another-secret-xx".getBytes(StandardCharsets.UTF_8);
        JWTClaimsSet good = claims().issuer("https://issuer.example").build();
        assertTrue(auth.authenticate(bearer(hsToken(good, SECRET))).isPresent());
        assertTrue(auth.authenticate(bearer(hsToken(good, other))).isEmpty(), "bad signature");
        assertTrue(auth.authenticate(bearer(hsToken(claims().issuer("https://issuer.example")
                .expirationTime(new Date(NOW - 61_000)).build(), SECRET))).isEmpty(), "expired beyond skew");
        assertTrue(auth.authenticate(bearer(hsToken(claims().issuer("https://issuer.example").expirationTime(null)
                .build(), SECRET))).isEmpty(), "no exp");
        assertTrue(auth.authenticate(bearer(hsToken(claims().issuer("https://evil.example").build(), SECRET))).isEmpty());
        assertTrue(auth.authenticate(bearer(hsToken(claims().issuer("https://issuer.example").subject(null).build(),
                SECRET))).isEmpty(), "no actor");
        assertTrue(auth.authenticate(bearer("not.a.jwt")).isEmpty());
        assertTrue(auth.authenticate(new Credentials() {
            @Override public Optional<String> header(String name) { return Optional.empty(); }
            @Override public Optional<String> queryParameter(String name) { return Optional.empty(); }
        }).isEmpty());
    }

    @Test
    void rs256VerifiesWithThePublicKeyAndRefusesAnHs256TokenSignedWithIt() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        KeyPair pair = gen.generateKeyPair();
        String pem = "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(pair.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----";
        JwtAuthenticator auth = new JwtAuthenticator(
                new JwtAuthenticator.Settings(null, pem, null, null, "sub", "partition", null, "scopes",
                        JwtAuthenticator.DEFAULT_CLOCK_SKEW_MS), CLOCK);
        SignedJWT rs = new SignedJWT(new JWSHeader(JWSAlgorithm.RS256), claims().build());
        rs.sign(new RSASSASigner(pair.getPrivate()));
        assertEquals("alice", auth.authenticate(bearer(rs.serialize())).orElseThrow().actorId());
        // algorithm confusion: an HS256 token whose "secret" is the public key text must not pass
        assertTrue(auth.authenticate(bearer(hsToken(claims().build(),
                pem.getBytes(StandardCharsets.UTF_8)))).isEmpty());
    }

    @Test
    void aShortSecretIsRefusedAtConstruction() {
        assertThrows(IllegalArgumentException.class, () -> new JwtAuthenticator(new JwtAuthenticator.Settings(
                "short".getBytes(StandardCharsets.UTF_8), null, null, null, "sub", "partition", null, "scopes", 0), CLOCK));
    }

    /** Issue 13: a token that expired 10 s ago writes nowhere; the default skew is 5 s. */
    @Test
    void aTokenPastItsExpiryAndTheSkewIsRefused() throws Exception {
        JwtAuthenticator auth = new JwtAuthenticator(hs(null), CLOCK);
        String tenSecondsAgo = hsToken(claims().expirationTime(new java.util.Date(NOW - 10_000)).build(), SECRET);
        assertTrue(auth.authenticate(bearer(tenSecondsAgo)).isEmpty());
        String threeSecondsAgo = hsToken(claims().expirationTime(new java.util.Date(NOW - 3_000)).build(), SECRET);
        assertEquals(NOW + 2_000, (long) auth.authenticate(bearer(threeSecondsAgo)).orElseThrow().expiresAtMs(),
                "accepted inside the skew, and only until exp plus the skew");
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/** {@code syncular.auth.mode=jwt}: bearer tokens decide actor, partition and the allowed scopes (SPEC §1.1, §3.2). */
@ExtendWith(ArquillianExtension.class)
class JwtAuthIT extends DatabaseIsolation {
    static final String SECRET = "it-secret-it-secret-it-secret-32";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("jwt"), Map.of("syncular.auth.mode", "jwt",
                "syncular.auth.jwt.hs256-secret", SECRET, "syncular.auth.jwt.issuer", "it-issuer"));
    }

    @ArquillianResource
    URL base;

    @Test
    void aSignedTokenAuthenticatesAndItsScopesClaimIsTheGrant() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        String token = token(new JWTClaimsSet.Builder().subject("alice").issuer("it-issuer").claim("partition", "t1")
                .claim("scopes", Map.of("list_id", List.of("groceries")))
                .expirationTime(new Date(System.currentTimeMillis() + 300_000)).build(), SECRET);
        HttpResponse<byte[]> ok = post("Bearer " + token, "groceries");
        assertEquals(200, ok.statusCode(), () -> new String(ok.body()));
        assertEquals(SubStart.Status.ACTIVE, ((SubStart) ResponseDecoder.decode(ok.body()).frames().get(1)).status());
        HttpResponse<byte[]> other = post("Bearer " + token, "secret-list");
        assertEquals(SubStart.Status.REVOKED, ((SubStart) ResponseDecoder.decode(other.body()).frames().get(1)).status());

        String forged = token(new JWTClaimsSet.Builder().subject("alice").issuer("it-issuer")
                .expirationTime(new Date(System.currentTimeMillis() + 300_000)).build(),
                "wrong-secret-wrong-secret-wrong-");
        for (String auth : List.of("Bearer " + forged, "Bearer nonsense", "")) {
            HttpResponse<byte[]> r = post(auth, "groceries");
            assertEquals(401, r.statusCode());
            assertTrue(new String(r.body()).contains("sync.auth_required"));
        }
    }

    private HttpResponse<byte[]> post(String authorization, String list) throws Exception {
        byte[] body = RequestEncoder.encode(new RequestMessage(1, List.of(new ReqHeader("jwt-client", 1),
                new PullHeader(0, 0, 0, 3), new Subscription("s", "todos", Map.of("list_id", List.of(list)), null, -1, null))));
        HttpRequest.Builder b = HttpRequest.newBuilder(base.toURI().resolve("sync"))
                .header("Content-Type", "application/vnd.syncular.sync.v2").POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (!authorization.isEmpty()) b.header("Authorization", authorization);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static String token(JWTClaimsSet claims, String secret) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.RequestDecoder;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseMessage;

/**
 * Every golden request vector POSTed verbatim (raw bytes, not re-encoded by our codec, so a symmetric misreading in
 * codec and server cannot hide) gets a response the strict decoder accepts, in the request's wire version; every
 * invalid request vector gets 400 with the manifest's code. The deployment's schema carries the vectors' fixture
 * tables ({@code notes}, {@code tasks}) with their scope variables.
 */
@ExtendWith(ArquillianExtension.class)
class VectorRequestIT extends DatabaseIsolation {
    private static final Path VECTORS = Path.of(System.getProperty("syncular.vectors", "../shared/vectors"), "request");

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("vectors"), Map.of(
                        "syncular.schema", "it/vector-fixture-schema.json",
                        "syncular.auth.mode", "fixed",
                        "syncular.auth.fixed.partition", "it-vectors",
                        "syncular.auth.fixed.allowed-scopes", "*"))
                .addAsResource("it/vector-fixture-schema.json");
    }

    @ArquillianResource
    URL base;

    @Test
    void everyValidRequestVectorGetsADecodableResponse() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        SyncTestClient http = new SyncTestClient(base.toURI(), "unused", "unused");
        List<String> cases = cases("\"bin\": \"([^\"/]+\\.bin)\"");
        assertEquals(5, cases.size(), "request manifest cases");
        for (String bin : cases) {
            byte[] request = Files.readAllBytes(VECTORS.resolve(bin));
            HttpResponse<byte[]> r = http.post(request, false);
            assertEquals(200, r.statusCode(), () -> bin + ": " + new String(r.body()));
            ResponseMessage response = ResponseDecoder.decode(r.body());
            assertEquals(RequestDecoder.decode(request).wireVersion(), response.wireVersion(), bin);
            assertFalse(response.frames().isEmpty(), bin);
        }
    }

    @Test
    void everyInvalidRequestVectorGets400WithTheManifestCode() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
        SyncTestClient http = new SyncTestClient(base.toURI(), "unused", "unused");
        String manifest = Files.readString(VECTORS.resolve("manifest.json"));
        Matcher m = Pattern.compile("\"bin\": \"(invalid/[^\"]+)\",\\s*\"error\": \"([^\"]+)\"").matcher(manifest);
        int n = 0;
        while (m.find()) {
            String bin = m.group(1);
            String code = m.group(2);
            HttpResponse<byte[]> r = http.post(Files.readAllBytes(VECTORS.resolve(bin)), false);
            String body = new String(r.body());
            assertEquals(400, r.statusCode(), () -> bin + ": " + body);
            assertTrue(body.contains("\"code\":\"" + code + "\""), () -> bin + ": " + body);
            n++;
        }
        assertEquals(7, n, "invalid request cases");
    }

    private static List<String> cases(String regex) throws IOException {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(Files.readString(VECTORS.resolve("manifest.json")));
        while (m.find()) out.add(m.group(1));
        return out;
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.ErrorCode;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.MutationFuzzTest;
import syncular.jakarta.wire.ResponseDecoder;

/**
 * Issue 13 item 4: mutations of every golden request vector POSTed to the live {@code /sync} (not only the codec,
 * {@code MutationFuzzTest}); every tenth input is sent gzip-compressed, half of those with the gzip bytes mutated
 * too. Every input gets a 200 whose body the strict decoder accepts, or a 4xx JSON body with a
 * catalog code; never a 5xx. {@code -Dsyncular.fuzz.live-mutations} per vector (default 150, so CI stays fast),
 * {@code -Dsyncular.fuzz.live-seed} (default fixed, so a run is reproducible); each input's own seed is printed on
 * failure and the input saved under {@code target/fuzz-failures/}. Inputs that once failed are replayed first, from
 * {@code src/test/resources/it/fuzz-regressions/} ({@value #GZIP_SUFFIX} files with {@code Content-Encoding: gzip}).
 */
@ExtendWith(ArquillianExtension.class)
class SyncFuzzIT extends DatabaseIsolation {
    private static final Path VECTORS = Path.of(System.getProperty("syncular.vectors", "../shared/vectors"), "request");
    private static final Path REGRESSIONS = Path.of("src/test/resources/it/fuzz-regressions");
    private static final Path FAILURES = Path.of("target/fuzz-failures");
    static final int PER_VECTOR = Integer.getInteger("syncular.fuzz.live-mutations", 150);
    static final long SEED = Long.getLong("syncular.fuzz.live-seed", 0x13_0004L);
    /** A saved input sent with {@code Content-Encoding: gzip}. */
    static final String GZIP_SUFFIX = ".gzip.bin";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("fuzz"), Map.of(
                        "syncular.schema", "it/vector-fixture-schema.json",
                        "syncular.auth.mode", "fixed",
                        "syncular.auth.fixed.partition", "it-fuzz",
                        "syncular.auth.fixed.allowed-scopes", "*"))
                .addAsResource("it/vector-fixture-schema.json");
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    /** POSTs the bytes as they are, with {@code Content-Encoding: gzip} when {@code gzip}. */
    private HttpResponse<byte[]> post(byte[] body, boolean gzip) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.toURI().resolve("sync")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/vnd.syncular.sync.v2");
        if (gzip) b.header("Content-Encoding", "gzip");
        return HTTP.send(b.POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Null when the answer is acceptable; else what was wrong with it. */
    private String problem(byte[] input, boolean gzip) throws Exception {
        HttpResponse<byte[]> r = post(input, gzip);
        int status = r.statusCode();
        if (status == 200) {
            try {
                ResponseDecoder.decode(r.body());
                return null;
            } catch (RuntimeException e) {
                return "200 with an undecodable body: " + e;
            }
        }
        String body = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
        if (status >= 500) return "HTTP " + status + ": " + body;
        if (!r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) {
            return "HTTP " + status + " without a JSON body: " + body;
        }
        Object parsed = Json.parse(body);
        Object code = parsed instanceof Map<?, ?> m ? m.get("code") : null;
        if (!(code instanceof String c) || ErrorCode.forWire(c).isEmpty()) return "HTTP " + status + " without a catalog code: " + body;
        return null;
    }

    @Test
    void everyMutatedRequestVectorGetsA200OrA4xxWithACatalogCode() throws Exception {
        List<String> failures = new ArrayList<>();
        if (Files.isDirectory(REGRESSIONS)) {
            try (Stream<Path> files = Files.list(REGRESSIONS)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".bin")).sorted().toList()) {
                    String p = problem(Files.readAllBytes(f), f.toString().endsWith(GZIP_SUFFIX));
                    if (p != null) failures.add("regression " + f.getFileName() + ": " + p);
                }
            }
        }
        List<String> vectors = validVectors();
        assertEquals(5, vectors.size(), "request manifest cases");
        int inputs = 0;
        for (int v = 0; v < vectors.size(); v++) {
            byte[] original = Files.readAllBytes(VECTORS.resolve(vectors.get(v)));
            for (int i = 0; i < PER_VECTOR; i++) {
                long inputSeed = SEED + 1_000_003L * v + i;   // one input = one seed: reproducible alone
                Random rnd = new Random(inputSeed);
                byte[] input = MutationFuzzTest.mutate(original, rnd);
                // every tenth input travels gzip-compressed, every other one of those with its gzip bytes damaged
                boolean gzip = i % 10 == 9;
                if (gzip) {
                    input = gzip(input);
                    if (i % 20 == 19) input = MutationFuzzTest.mutate(input, rnd);
                }
                inputs++;
                String p = problem(input, gzip);
                if (p != null) {
                    String name = vectors.get(v).replace(".bin", "") + "-seed-" + inputSeed
                            + (gzip ? GZIP_SUFFIX : ".bin");
                    save(name, input);
                    failures.add(vectors.get(v) + " input seed " + inputSeed + " (saved as " + FAILURES.resolve(name)
                            + "): " + p);
                }
            }
        }
        System.out.println("[live-fuzz] " + inputs + " mutated requests over " + vectors.size()
                + " vectors, run seed " + SEED + ": " + failures.size() + " failures");
        assertTrue(failures.isEmpty(), () -> failures.size() + " inputs failed (run seed " + SEED + "):\n"
                + String.join("\n", failures.subList(0, Math.min(30, failures.size()))));
    }

    private static byte[] gzip(byte[] plain) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        }
        return out.toByteArray();
    }

    private static void save(String name, byte[] input) throws IOException {
        Files.createDirectories(FAILURES);
        Files.write(FAILURES.resolve(name), input);
    }

    private static List<String> validVectors() throws IOException {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"bin\": \"([^\"/]+\\.bin)\"").matcher(Files.readString(VECTORS.resolve("manifest.json")));
        while (m.find()) out.add(m.group(1));
        return out;
    }
}

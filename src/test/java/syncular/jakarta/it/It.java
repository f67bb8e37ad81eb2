package syncular.jakarta.it;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Shared helpers of the integration tests: the WAR under test (the real {@code target/syncular.war}, never a
 * hand-picked class list), per-deployment configuration, the server under test and its log, HTTP and JDBC.
 */
public final class It {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private It() { }

    /** payara or wildfly: the server this failsafe execution runs against. */
    public static String server() { return System.getProperty("syncular.it.server", "payara"); }

    public static boolean isWildFly() { return "wildfly".equals(server()); }

    /** The HTTP base of a deployment by name, for deployments Arquillian does not inject a URL for. */
    public static URI base(String deploymentName) {
        int port = isWildFly() ? 8180 : 8080;
        return URI.create("http://localhost:" + port + "/" + deploymentName + "/");
    }

    /** The built WAR, renamed so several variants can be deployed side by side. */
    public static WebArchive war(String name) {
        File built = new File(System.getProperty("syncular.it.war", "target/syncular.war"));
        WebArchive war = ShrinkWrap.create(WebArchive.class, name + ".war");
        war.merge(ShrinkWrap.createFromZipFile(WebArchive.class, built));
        return war;
    }

    /**
     * Adds MicroProfile Config values that win over the failsafe environment (ordinal 500 &gt; env 300): how an IT
     * gives one deployment its own configuration.
     */
    public static WebArchive withConfig(WebArchive war, Map<String, String> values) {
        StringBuilder props = new StringBuilder("config_ordinal=500\n");
        values.forEach((k, v) -> props.append(k).append('=').append(v.replace("\\", "\\\\").replace(":", "\\:"))
                .append('\n'));
        return war.addAsResource(new StringAsset(props.toString()), "META-INF/microprofile-config.properties");
    }

    /** The shipped WEB-INF/jboss-web.xml with its text transformed (WildFly reads only this for the DataSource). */
    public static WebArchive withJbossWeb(WebArchive war, java.util.function.UnaryOperator<String> edit) {
        try {
            String xml = Files.readString(Path.of("src/main/webapp/WEB-INF/jboss-web.xml"), StandardCharsets.UTF_8);
            war.delete("WEB-INF/jboss-web.xml");
            return war.addAsWebInfResource(new StringAsset(edit.apply(xml)), "jboss-web.xml");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The server's main log file, which stays in place after the run. */
    public static Path serverLog() {
        if (isWildFly()) return Path.of(System.getProperty("jboss.home"), "standalone", "log", "server.log");
        return Path.of(System.getProperty("payara.home"), "glassfish", "domains", "domain1", "logs", "server.log");
    }

    public static long logSize() throws IOException {
        Path log = serverLog();
        return Files.exists(log) ? Files.size(log) : 0;
    }

    /** What the server logged since {@code offset} (the log may have rotated: then the whole file). */
    public static String logSince(long offset) throws IOException {
        byte[] all = Files.readAllBytes(serverLog());
        int from = offset <= all.length ? (int) offset : 0;
        return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    }

    /** The admin user src/test/servers/prepare.sh creates on both servers (group syncular-admin). */
    public static final String[] ADMIN = {"Authorization", "Basic " + java.util.Base64.getEncoder()
            .encodeToString("admin1:Adm1n!pass".getBytes(java.nio.charset.StandardCharsets.UTF_8))};

    public static HttpResponse<String> get(URI uri, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET();
        if (headers.length > 0) b.headers(headers);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    public static HttpResponse<String> post(URI uri) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    public static HttpResponse<String> postBody(URI uri, String contentType, String body)
            throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    public static HttpResponse<String> postBodyWithHeader(URI uri, String contentType, String body, String header,
                                                          String value) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("Content-Type", contentType)
                .header(header, value).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A call to the conformance control plane ({@code /__conformance/<path>}) of the deployment at {@code base}. */
    public static HttpResponse<String> conformance(java.net.URL base, String method, String path, String body)
            throws IOException, InterruptedException {
        URI uri;
        try {
            uri = base.toURI().resolve("__conformance/" + path);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).header("Content-Type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A control-plane reply: 200, JSON, exactly this body. */
    public static void assertJson(HttpResponse<String> r, String expected) {
        org.junit.jupiter.api.Assertions.assertEquals(200, r.statusCode(), r.body());
        org.junit.jupiter.api.Assertions.assertTrue(
                r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        org.junit.jupiter.api.Assertions.assertEquals(expected, r.body());
    }

    /** Polls until the response satisfies {@code done}, failing with the last response after {@code timeout}. */
    public static HttpResponse<String> await(URI uri, Predicate<HttpResponse<String>> done, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        HttpResponse<String> last = null;
        IOException lastError = null;
        while (System.nanoTime() < deadline) {
            try {
                last = get(uri);
                if (done.test(last)) return last;
            } catch (IOException e) {
                lastError = e;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("condition not reached within " + timeout + " at " + uri + "; last: "
                + (last == null ? String.valueOf(lastError) : last.statusCode() + " " + last.body()));
    }

    /** A JDBC connection to the embedded PostgreSQL the servers use. */
    public static Connection jdbc() throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://localhost:" + Integer.getInteger("syncular.it.pg.port")
                + "/postgres", "postgres", "postgres");
    }
}

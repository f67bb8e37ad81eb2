package syncular.jakarta.sync.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * Image-lane bootstrap benchmark (issue 17; NOT a test), target-neutral like {@link SyncLoadDriver}: against our
 * server or the reference's load server ({@code load/src/server.ts}, table {@code tasks}, scope
 * {@code project:{project_id}}, no auth). Per run it seeds {@code --rows} rows into a fresh project (500 a commit),
 * then bootstraps that project from scratch four times, the way a client with default paging does: on the rows lane
 * (accept bits 0–1, every page decoded), and on the image lane (bits 0–2: the SQLite image downloaded from
 * {@code GET <base>segments/{id}} and opened with the SQLite JDBC driver), each by a first client and a second one
 * at the same pin (the image lane's second client must get the same segment id: reuse). Every row is counted and
 * every id checked unique, so a short bootstrap cannot look fast.
 *
 * <p>Options: {@code --url=} base URL, {@code --rows=100000}, {@code --runs=3}; other {@code --key=value} options
 * of the side-by-side kit are accepted and ignored.
 */
public final class ImageBootstrapBench {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    private ImageBootstrapBench() { }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchSupport.options(args);
        URI base = BenchSupport.baseUrl(o);
        int rows = BenchSupport.intOption(o, "rows", 100000);
        int runs = BenchSupport.intOption(o, "runs", 3);
        System.out.printf("# ImageBootstrapBench %s rows=%d runs=%d%n", base, rows, runs);
        System.out.printf("%-4s %-6s %-7s %10s %9s %10s %13s %9s %s%n", "run", "lane", "client", "total ms",
                "requests", "downloads", "bytes", "rows", "segment");
        for (int run = 1; run <= runs; run++) {
            String project = "img-" + run + "-" + Long.toHexString(System.nanoTime());
            seed(base, project, rows);
            for (boolean image : new boolean[] {false, true}) {
                String first = null;
                for (String client : List.of("first", "second")) {
                    Result r = bootstrap(base, project, image, project + "-" + (image ? "img" : "rows") + "-" + client);
                    if (r.rows() != rows) throw new IllegalStateException("bootstrap delivered " + r.rows() + " rows");
                    String reuse = "";
                    if (image) {
                        if (first == null) first = r.segment();
                        else reuse = r.segment().equals(first) ? " (reused)" : " (REBUILT: not reused)";
                    }
                    System.out.printf("%-4d %-6s %-7s %10.1f %9d %10d %13s %9d %s%n", run, image ? "image" : "rows",
                            client, r.nanos() / 1e6, r.requests(), r.downloads(), String.format("%,d", r.bytes()),
                            r.rows(), image ? r.segment().substring(0, 19) + "…" + reuse : "-");
                }
            }
        }
    }

    /** One bootstrap: its wall time, pull requests, segment downloads, bytes, distinct rows, and the image's id. */
    record Result(long nanos, int requests, int downloads, long bytes, int rows, String segment) { }

    static void seed(URI base, String project, int rows) throws Exception {
        for (int from = 0; from < rows; from += 500) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = from; i < Math.min(rows, from + 500); i++) {
                String id = String.format("%s-%07d", project, i);
                ops.add(PushCommit.Operation.upsert("tasks", id, null, BenchSupport.task(id, project,
                        "Image bootstrap benchmark row " + i, i % 3 == 0, i % 5, 1_700_000_000_000L + i)));
            }
            ResponseMessage m = post(base, new RequestMessage(1, List.of(new ReqHeader("seeder-" + project, 1),
                    new PushCommit("seed-" + from, ops))));
            PushResult p = (PushResult) m.frames().stream().filter(PushResult.class::isInstance).findFirst()
                    .orElseThrow();
            if (p.status() != PushResult.Status.APPLIED) throw new IllegalStateException("seed push " + p.status());
        }
    }

    static Result bootstrap(URI base, String project, boolean image, String clientId) throws Exception {
        int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS
                | (image ? PullHeader.ACCEPT_SQLITE : 0);
        Set<String> seen = new HashSet<>();
        long cursor = -1;
        String token = null;
        int requests = 0;
        int downloads = 0;
        long bytes = 0;
        String segment = null;
        long start = System.nanoTime();
        while (true) {
            byte[] body = postRaw(base, new RequestMessage(1, List.of(new ReqHeader(clientId, 1),
                    new PullHeader(0, 0, 0, accept),
                    new Subscription("s", "tasks", Map.of("project_id", List.of(project)), null, cursor, token))));
            requests++;
            bytes += body.length;
            for (ResponseFrame f : ResponseDecoder.decode(body).frames()) {
                if (f instanceof SegmentInline s) {
                    count(RowsSegmentDecoder.decode(s.payload()), seen);
                } else if (f instanceof SegmentRef ref) {
                    HttpResponse<byte[]> seg = HTTP.send(HttpRequest.newBuilder(base.resolve("segments/"
                            + ref.segmentId())).header("X-Syncular-Scopes", "{\"project_id\":[\"" + project + "\"]}")
                            .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
                    if (seg.statusCode() != 200) throw new IllegalStateException("segment HTTP " + seg.statusCode());
                    downloads++;
                    bytes += seg.body().length;
                    if (ref.mediaType() == SegmentRef.MediaType.SQLITE) {
                        segment = ref.segmentId();
                        countImage(seg.body(), seen);
                    } else {
                        count(RowsSegmentDecoder.decode(seg.body()), seen);
                    }
                } else if (f instanceof SubEnd e) {
                    cursor = e.nextCursor();
                    token = e.bootstrapStateJson();
                }
            }
            if (token == null) break;
        }
        if (image && segment == null) throw new IllegalStateException("the image lane served no image");
        return new Result(System.nanoTime() - start, requests, downloads, bytes, seen.size(), segment);
    }

    private static void count(RowsSegment segment, Set<String> seen) {
        for (List<RowsSegment.Row> block : segment.blocks()) {
            for (RowsSegment.Row row : block) {
                if (!seen.add((String) row.values()[0])) throw new IllegalStateException("a row came twice");
            }
        }
    }

    /** Opens the image as a client would (a file, the SQLite driver) and reads every row's id and version. */
    private static void countImage(byte[] image, Set<String> seen) throws Exception {
        Path f = Files.write(Files.createTempFile("bench-image-", ".sqlite"), image);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + f); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, _syncular_version FROM tasks")) {
            while (rs.next()) {
                if (rs.getLong(2) < 1 || !seen.add(rs.getString(1))) throw new IllegalStateException("bad image row");
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    private static ResponseMessage post(URI base, RequestMessage request) throws Exception {
        return ResponseDecoder.decode(postRaw(base, request));
    }

    /**
     * {@code POST <base>sync} on this thread's own persistent connection ({@link PlainHttp}, as the push-pull driver:
     * the JDK client's hand-offs between threads cost the shared cores about 0.3 ms a request).
     */
    static byte[] postRaw(URI base, RequestMessage request) throws Exception {
        PlainHttp http = CONNECTIONS.get().computeIfAbsent(base, b -> new PlainHttp(b.resolve("sync"),
                SyncLoadDriver.SYNC_MEDIA_TYPE, 300_000, "Accept-Encoding: identity"));
        PlainHttp.Response r = http.post(RequestEncoder.encode(request));
        if (r.status() != 200) throw new IllegalStateException("HTTP " + r.status() + ": " + new String(r.body()));
        return r.body();
    }

    /** Each driver thread's connections, one per base URL (a thread is one virtual client). */
    private static final ThreadLocal<Map<URI, PlainHttp>> CONNECTIONS = ThreadLocal.withInitial(HashMap::new);
}

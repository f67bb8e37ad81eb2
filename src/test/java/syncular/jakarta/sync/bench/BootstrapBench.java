package syncular.jakarta.sync.bench;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
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
 * Bootstrap benchmark (issue #5; NOT a test): seeds N rows into one list of the demo {@code todos} schema, then
 * bootstraps that list from scratch the way a client does — pull rounds carrying the bootstrapState token, segments
 * taken inline or downloaded from {@code GET /segments/{id}} — and reports time to first byte of the first
 * response, total time until the bootstrap is complete, requests, bytes on the wire and the server's resident memory
 * (VmRSS of the Payara Micro process, sampled every 50 ms). Every row is decoded and counted, so a short bootstrap
 * cannot look fast.
 *
 * <p>Against the {@code mvn -Prun} default (fixed auth, demo schema):
 * {@code java -cp target/test-classes:target/classes syncular.jakarta.sync.bench.BootstrapBench
 * http://localhost:8797/syncular/ 100000 3}; arguments: base URL, rows, bootstrap repetitions.
 */
public final class BootstrapBench {
    private static final int SEED_BATCH = 500;

    private BootstrapBench() { }

    public static void main(String[] args) throws Exception {
        URI base = URI.create(args.length > 0 ? args[0] : "http://localhost:8797/syncular/");
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int repetitions = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
        Optional<ProcessHandle> server = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains("payara-micro")).orElse(false)).findFirst();
        System.out.println("server process: " + server.map(p -> p.pid() + " (" + rssKiB(p.pid()) / 1024 + " MiB RSS)")
                .orElse("not found on this host (RSS not reported)"));

        String list = "boot-" + Long.toHexString(System.nanoTime());
        long seedStart = System.nanoTime();
        for (int from = 0; from < rows; from += SEED_BATCH) {
            List<PushCommit.Operation> ops = new ArrayList<>();
            for (int i = from; i < Math.min(rows, from + SEED_BATCH); i++) {
                String id = String.format("%s-%07d", list, i);
                ops.add(PushCommit.Operation.upsert("todos", id, null, BenchSupport.todo(id, list,
                        "Bootstrap benchmark row number " + i, i % 3 == 0, i)));
            }
            ResponseMessage m = post(http, base.resolve("sync"), new RequestMessage(1, List.of(
                    new ReqHeader("seeder-" + list, 1), new PushCommit("seed-" + from, ops))), false).message;
            PushResult p = (PushResult) m.frames().stream().filter(PushResult.class::isInstance).findFirst()
                    .orElseThrow();
            if (p.status() != PushResult.Status.APPLIED) throw new IllegalStateException("seed push " + p.status());
        }
        double seedSeconds = (System.nanoTime() - seedStart) / 1e9;
        System.out.printf("seeded %,d rows in %.1f s (%,.0f rows/s, %d rows per commit)%n", rows, seedSeconds,
                rows / seedSeconds, SEED_BATCH);

        System.out.printf("%-6s %-12s %-8s %9s %9s %9s %9s %12s %12s %14s%n", "run", "pages", "coding", "ttfb ms",
                "total ms", "requests", "segments", "wire bytes", "rows", "server RSS MiB");
        // the spec's default paging (limitSnapshotRows/maxSnapshotPages 0), then large pages: 5,000 rows a page,
        // up to 50 pages a request (each page above the inline cap travels as a SEGMENT_REF and is downloaded)
        int[][] paging = {{0, 0}, {5000, 50}};
        for (int run = 1; run <= repetitions; run++) {
            for (int[] pages : paging) {
                for (boolean gzip : new boolean[] {false, true}) {
                    bootstrap(http, base, list, rows, run, pages[0], pages[1], gzip, server);
                }
            }
        }
    }

    private static void bootstrap(HttpClient http, URI base, String list, int expected, int run, int pageRows,
                                  int maxPages, boolean gzip, Optional<ProcessHandle> server) throws Exception {
        String clientId = "booter-" + list + "-" + run + "-" + pageRows + (gzip ? "-gz" : "");
        Map<String, List<String>> scopes = Map.of("list_id", List.of(list));
        AtomicLong peakRss = new AtomicLong();
        long rssBefore = server.map(p -> rssKiB(p.pid())).orElse(0L);
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                server.ifPresent(p -> peakRss.accumulateAndGet(rssKiB(p.pid()), Math::max));
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "rss-sampler");
        sampler.setDaemon(true);
        sampler.start();

        long cursor = -1;
        String token = null;
        Set<String> seen = new HashSet<>();
        int requests = 0;
        int segments = 0;
        long wire = 0;
        long ttfb = -1;
        long start = System.nanoTime();
        while (true) {
            Posted r = post(http, base.resolve("sync"), new RequestMessage(1, List.of(
                    new ReqHeader(clientId, 1),
                    new PullHeader(0, pageRows, maxPages,
                            PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS),
                    new Subscription("s", "todos", scopes, null, cursor, token))), gzip);
            requests++;
            wire += r.wireBytes;
            if (ttfb < 0) ttfb = r.firstByteNanos - start;
            for (ResponseFrame f : r.message.frames()) {
                if (f instanceof SegmentInline s) {
                    count(RowsSegmentDecoder.decode(s.payload()), seen);
                } else if (f instanceof SegmentRef ref) {
                    segments++;
                    HttpResponse<byte[]> seg = http.send(HttpRequest.newBuilder(base.resolve("segments/"
                            + ref.segmentId())).header("X-Syncular-Scopes", "{\"list_id\":[\"" + list + "\"]}")
                            .header("Accept-Encoding", gzip ? "gzip" : "identity").GET().build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    if (seg.statusCode() != 200) throw new IllegalStateException("segment " + seg.statusCode());
                    wire += seg.body().length;
                    count(RowsSegmentDecoder.decode(decoded(seg.body(), seg.headers().firstValue("Content-Encoding")
                            .orElse(""))), seen);
                } else if (f instanceof SubEnd e) {
                    cursor = e.nextCursor();
                    token = e.bootstrapStateJson();
                }
            }
            if (token == null) break;
        }
        long total = System.nanoTime() - start;
        sampler.interrupt();
        sampler.join();
        if (seen.size() != expected) throw new IllegalStateException("bootstrap delivered " + seen.size() + " rows");
        System.out.printf("%-6d %-12s %-8s %9.1f %9.1f %9d %9d %12s %12s %14s%n", run,
                pageRows == 0 ? "default" : pageRows + "x" + maxPages, gzip ? "gzip" : "identity",
                ttfb / 1e6, total / 1e6, requests, segments, String.format("%,d", wire),
                String.format("%,d", seen.size()), server.isPresent()
                        ? String.format("%d → %d", rssBefore / 1024, peakRss.get() / 1024) : "n/a");
    }

    private static void count(RowsSegment segment, Set<String> seen) {
        for (List<RowsSegment.Row> block : segment.blocks()) {
            for (RowsSegment.Row row : block) {
                String id = (String) row.values()[0];
                if (!seen.add(id)) throw new IllegalStateException("row delivered twice: " + id);
            }
        }
    }

    private record Posted(ResponseMessage message, long firstByteNanos, long wireBytes) { }

    private static Posted post(HttpClient http, URI sync, RequestMessage request, boolean gzip)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(sync).timeout(Duration.ofMinutes(5))
                .header("Content-Type", "application/vnd.syncular.sync.v2")
                .header("Accept-Encoding", gzip ? "gzip" : "identity");
        HttpResponse<InputStream> r = http.send(b.POST(HttpRequest.BodyPublishers.ofByteArray(
                RequestEncoder.encode(request))).build(), HttpResponse.BodyHandlers.ofInputStream());
        byte[] body;
        long firstByte;
        try (InputStream in = r.body()) {
            int first = in.read();
            firstByte = System.nanoTime();
            byte[] rest = in.readAllBytes();
            body = new byte[first < 0 ? 0 : rest.length + 1];
            if (first >= 0) {
                body[0] = (byte) first;
                System.arraycopy(rest, 0, body, 1, rest.length);
            }
        }
        if (r.statusCode() != 200) throw new IllegalStateException("HTTP " + r.statusCode() + ": " + new String(body));
        byte[] plain = decoded(body, r.headers().firstValue("Content-Encoding").orElse(""));
        return new Posted(ResponseDecoder.decode(plain), firstByte, body.length);
    }

    private static byte[] decoded(byte[] body, String coding) throws IOException {
        if (!coding.equals("gzip")) return body;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            return in.readAllBytes();
        }
    }

    private static long rssKiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }
}

package syncular.jakarta.it;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import syncular.jakarta.wire.ColumnDescriptor;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.Op;
import syncular.jakarta.wire.PullHeader;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.ReqHeader;
import syncular.jakarta.wire.RequestEncoder;
import syncular.jakarta.wire.RequestFrame;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseDecoder;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.RespHeader;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.Subscription;

/**
 * A minimal Syncular client over real HTTP, built on our codec: a replica of the demo {@code todos} table (rows and
 * versions), one subscription, push and pull rounds. Enough to check convergence against the server.
 */
final class SyncTestClient {
    /** The demo schema's todos table as the row codec sees it, from the schema the WAR ships. */
    static final List<ColumnDescriptor> TODOS = syncular.jakarta.schema.SchemaCompiler
            .load("syncular/demo/syncular.ir.json", SyncTestClient.class.getClassLoader())
            .table("todos").orElseThrow().descriptors();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    final String clientId;
    URI sync;
    final String list;
    long cursor = -1;
    String bootstrapState;
    /** rowId → (version, title) */
    final Map<String, Object[]> replica = new TreeMap<>();
    private int commitCounter;
    /** The conformance host's {@code X-Syncular-Actor}, or null for a server that authenticates otherwise. */
    private final String actor;
    private int wire = 1;
    private String logEpoch;
    private int resets;

    SyncTestClient(URI base, String clientId, String list) { this(base, clientId, list, null); }

    SyncTestClient(URI base, String clientId, String list, String actor) {
        this.sync = base.resolve("sync");
        this.clientId = clientId;
        this.list = list;
        this.actor = actor;
    }

    static byte[] todo(String id, String list, String title, boolean done, long position) {
        return RowCodec.encode(TODOS, new Object[] {id, list, title, done, position, 1_700_000_000_000L});
    }

    PushCommit upsert(String id, String title, Long baseVersion) {
        return new PushCommit(clientId + "-c" + (++commitCounter),
                List.of(PushCommit.Operation.upsert("todos", id, baseVersion, todo(id, list, title, false, 1))));
    }

    Subscription subscription() {
        return new Subscription("todos-" + list, "todos", Map.of("list_id", List.of(list)), null, cursor, bootstrapState);
    }

    /**
     * Wire version 2 from now on (SPEC §2.1): requests carry the log epoch; the first acquires it, and a
     * {@code resetRequired} answer resets the replica and cursor and replays the round's pushes.
     */
    SyncTestClient onWire2() {
        wire = 2;
        return this;
    }

    /** The same client (id, replica, cursor, epoch) from now on talking to the server at {@code base}. */
    void reconnect(URI base) { sync = base.resolve("sync"); }

    /** How many times a wire 2 client was told {@code resetRequired} after it held an epoch. */
    int resets() { return resets; }

    /** One round: the given pushes and a pull of the subscription; applies what comes back. */
    ResponseMessage round(List<PushCommit> pushes) throws IOException, InterruptedException {
        if (wire == 2 && logEpoch == null) exchange(List.of());   // epoch acquisition carries no pushes (§2.1)
        ResponseMessage response = exchange(pushes);
        if (wire == 2 && ((RespHeader) response.frames().get(0)).resetRequired()) {
            resets++;
            response = exchange(pushes);   // reset done: the outbox replays on the new epoch
        }
        return response;
    }

    private ResponseMessage exchange(List<PushCommit> pushes) throws IOException, InterruptedException {
        List<RequestFrame> frames = new ArrayList<>();
        frames.add(wire == 2 ? new ReqHeader(clientId, 1, logEpoch) : new ReqHeader(clientId, 1));
        frames.addAll(pushes);
        frames.add(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(subscription());
        ResponseMessage response = send(new RequestMessage(wire, frames));
        RespHeader header = (RespHeader) response.frames().get(0);
        if (wire == 2 && header.resetRequired()) {
            logEpoch = header.logEpoch();
            replica.clear();
            cursor = -1;
            bootstrapState = null;
            return response;
        }
        apply(response);
        return response;
    }

    ResponseMessage send(RequestMessage request) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = post(RequestEncoder.encode(request), true);
        if (r.statusCode() != 200) {
            throw new AssertionError("HTTP " + r.statusCode() + ": " + new String(r.body()));
        }
        return ResponseDecoder.decode(r.body());
    }

    HttpResponse<byte[]> post(byte[] body, boolean gzip) throws IOException, InterruptedException {
        byte[] sent = body;
        HttpRequest.Builder b = HttpRequest.newBuilder(sync).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/vnd.syncular.sync.v2");
        if (actor != null) b.header("X-Syncular-Actor", actor);
        if (gzip) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
                gz.write(body);
            }
            sent = out.toByteArray();
            b.header("Content-Encoding", "gzip").header("Accept-Encoding", "gzip");
        }
        HttpResponse<byte[]> r = HTTP.send(b.POST(HttpRequest.BodyPublishers.ofByteArray(sent)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (r.headers().firstValue("Content-Encoding").orElse("").equals("gzip")) {
            byte[] plain;
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(r.body()))) {
                plain = in.readAllBytes();
            }
            byte[] finalPlain = plain;
            return new HttpResponse<>() {
                public int statusCode() { return r.statusCode(); }
                public HttpRequest request() { return r.request(); }
                public java.util.Optional<HttpResponse<byte[]>> previousResponse() { return r.previousResponse(); }
                public java.net.http.HttpHeaders headers() { return r.headers(); }
                public byte[] body() { return finalPlain; }
                public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return r.sslSession(); }
                public URI uri() { return r.uri(); }
                public HttpClient.Version version() { return r.version(); }
            };
        }
        return r;
    }

    /** Applies segments and commits to the replica, then the cursor and token at SUB_END (§1.4). */
    void apply(ResponseMessage response) {
        for (ResponseFrame f : response.frames()) {
            if (f instanceof SegmentInline s) {
                RowsSegment seg = RowsSegmentDecoder.decode(s.payload());
                for (List<RowsSegment.Row> block : seg.blocks()) {
                    for (RowsSegment.Row row : block) {
                        replica.put((String) row.values()[0], new Object[] {row.serverVersion(), row.values()[2]});
                    }
                }
            } else if (f instanceof CommitFrame c) {
                for (CommitFrame.Change ch : c.changes()) {
                    if (ch.op() == Op.DELETE) {
                        replica.remove(ch.rowId());
                    } else {
                        Object[] values = RowCodec.decode(TODOS, ch.row());
                        replica.put(ch.rowId(), new Object[] {ch.rowVersion(), values[2]});
                    }
                }
            } else if (f instanceof SubEnd e) {
                cursor = e.nextCursor();
                bootstrapState = e.bootstrapStateJson();
            }
        }
    }

    /** The replica as "rowId@version:title" lines, for comparison. */
    List<String> snapshot() {
        List<String> out = new ArrayList<>();
        replica.forEach((id, v) -> out.add(id + "@" + v[0] + ":" + v[1]));
        return out;
    }
}

package syncular.jakarta.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.Op;
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
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.RowsSegment;
import syncular.jakarta.wire.RowsSegmentDecoder;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;
import syncular.jakarta.wire.Subscription;

/**
 * Randomized multi-tenant isolation (issue #5) under JWT authentication, which puts each actor in the partition its
 * token names: actors of two partitions, with random grants, write the SAME row ids into the same list names and pull
 * (bootstraps inline and by SEGMENT_REF, incremental windows, lists inside and outside their grant). No actor ever
 * receives a row, commit or segment of the other partition, nor a row outside its grant; a segment id of the other
 * partition is not downloadable; every replica converges on its partition's rows. A clientId is bound to its first
 * actor within a partition ({@code sync.invalid_client_id}), not across partitions.
 */
@ExtendWith(ArquillianExtension.class)
class IsolationIT extends DatabaseIsolation {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final List<String> LISTS = List.of("l0", "l1", "l2", "l3");

    @Deployment(testable = false)
    static WebArchive deployment() {
        return It.withConfig(It.war("isolation"), Map.of("syncular.auth.mode", "jwt",
                "syncular.auth.jwt.hs256-secret", JwtAuthIT.SECRET, "syncular.auth.jwt.issuer", "it-issuer"));
    }

    @ArquillianResource
    URL base;

    @BeforeEach
    void awaitReady() throws Exception {
        It.await(base.toURI().resolve("health/ready"), r -> r.statusCode() == 200, Duration.ofSeconds(90));
    }

    /** One actor: its partition, grant, token, and per-list pull state and replica (rowId → title). */
    final class Actor {
        final String name;
        final String partition;
        final List<String> grant;
        final String token;
        final Map<String, Long> cursor = new HashMap<>();
        final Map<String, String> bootstrap = new HashMap<>();
        final Map<String, Map<String, String>> replica = new HashMap<>();
        int commits;

        Actor(String name, String partition, List<String> grant) throws Exception {
            this.name = name;
            this.partition = partition;
            this.grant = grant;
            this.token = JwtAuthIT.token(new JWTClaimsSet.Builder().subject(name).issuer("it-issuer")
                    .claim("partition", partition).claim("scopes", Map.of("list_id", grant))
                    .expirationTime(new Date(System.currentTimeMillis() + 3_600_000)).build(), JwtAuthIT.SECRET);
        }

        HttpResponse<byte[]> post(String clientId, List<RequestFrame> frames) throws Exception {
            List<RequestFrame> all = new ArrayList<>();
            all.add(new ReqHeader(clientId, 1));
            all.addAll(frames);
            return HTTP.send(HttpRequest.newBuilder(base.toURI().resolve("sync"))
                    .header("Content-Type", "application/vnd.syncular.sync.v2").header("Authorization", "Bearer " + token)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(RequestEncoder.encode(new RequestMessage(1, all))))
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
        }

        ResponseMessage sync(List<RequestFrame> frames) throws Exception {
            HttpResponse<byte[]> r = post("client-" + name, frames);
            assertEquals(200, r.statusCode(), () -> new String(r.body()));
            return ResponseDecoder.decode(r.body());
        }

        HttpResponse<byte[]> download(String segmentId, String list) throws Exception {
            URI uri = base.toURI().resolve("segments/" + segmentId);
            return HTTP.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + token)
                    .header("X-Syncular-Scopes", "{\"list_id\":[\"" + list + "\"]}").GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
        }
    }

    @Test
    void randomizedActorsOfTwoPartitionsNeverSeeEachOthersData() throws Exception {
        for (int round = 0; round < 3; round++) scenario(System.nanoTime());
    }

    /** One randomized run; the seed is in every failure message. */
    private void scenario(long seed) throws Exception {
        Random random = new Random(seed);
        String run = Long.toHexString(seed);
        String why = "seed " + seed;
        List<Actor> actors = new ArrayList<>();
        for (String p : List.of("A", "B")) {
            for (int i = 0; i < 3; i++) {
                List<String> grant = new ArrayList<>();
                for (String l : LISTS) if (random.nextBoolean()) grant.add(l);
                if (grant.isEmpty()) grant.add(LISTS.get(random.nextInt(LISTS.size())));
                actors.add(new Actor(p + "-actor" + i + "-" + run, "iso-" + p + "-" + run, grant));
            }
        }
        Map<String, List<String>> foreignSegments = new HashMap<>();   // partition → segment ids seen there
        for (int step = 0; step < 80; step++) {
            Actor a = actors.get(random.nextInt(actors.size()));
            String list = LISTS.get(random.nextInt(LISTS.size()));
            boolean granted = a.grant.contains(list);
            if (random.nextInt(3) == 0) {
                List<PushCommit.Operation> ops = new ArrayList<>();
                for (int k = 0, n = 1 + random.nextInt(4); k < n; k++) {
                    String id = "row-" + list + "-" + random.nextInt(12);   // the same ids in both partitions
                    ops.add(random.nextInt(5) == 0 ? PushCommit.Operation.delete("todos", id, null)
                            : PushCommit.Operation.upsert("todos", id, null, SyncTestClient.todo(id, list,
                            a.partition + "|" + list + "|" + step, false, step)));
                }
                PushResult r = (PushResult) a.sync(List.of(new PushCommit(a.name + "-c" + (++a.commits), ops)))
                        .frames().get(1);
                boolean deletesOnly = ops.stream().allMatch(o -> o.op() == Op.DELETE);
                if (!granted && !deletesOnly) assertEquals(PushResult.Status.REJECTED, r.status(), why);
                if (granted) assertEquals(PushResult.Status.APPLIED, r.status(), why);
            } else {
                int accept = random.nextBoolean() ? PullHeader.ACCEPT_EXTERNAL_ROWS
                        : PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
                ResponseMessage m = a.sync(List.of(new PullHeader(1 + random.nextInt(5), 1 + random.nextInt(6),
                        1 + random.nextInt(3), accept), new Subscription("s-" + list, "todos",
                        Map.of("list_id", List.of(list)), null, a.cursor.getOrDefault(list, -1L), a.bootstrap.get(list))));
                pulled(a, list, granted, m, foreignSegments, why);
            }
        }
        // drain: every actor pulls each granted list to the head and must equal its partition's rows
        for (Actor a : actors) {
            for (String list : a.grant) {
                for (int i = 0; i < 200; i++) {
                    ResponseMessage m = a.sync(List.of(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS),
                            new Subscription("s-" + list, "todos", Map.of("list_id", List.of(list)), null,
                                    a.cursor.getOrDefault(list, -1L), a.bootstrap.get(list))));
                    pulled(a, list, true, m, foreignSegments, why);
                    boolean quiet = m.frames().stream().noneMatch(f -> f instanceof CommitFrame
                            || f instanceof SegmentInline);
                    if (a.bootstrap.get(list) == null && quiet) break;
                }
                List<String> expected = SyncFlowIT.serverRows(a.partition, list).stream()
                        .map(s -> s.substring(0, s.indexOf('@')) + "=" + s.substring(s.indexOf(':') + 1)).toList();
                List<String> mine = new ArrayList<>();
                new TreeMap<>(a.replica.getOrDefault(list, Map.of())).forEach((id, t) -> mine.add(id + "=" + t));
                assertEquals(expected, mine, why + " " + a.name + " " + list);
            }
        }
        // a segment id of the other partition is not downloadable, whatever the grant. Ids are content addresses
        // (§5.8): bytes both partitions published alike (an empty page) share an id, and that is no leak.
        for (Actor a : actors) {
            String other = a.partition.startsWith("iso-A") ? a.partition.replace("iso-A", "iso-B")
                    : a.partition.replace("iso-B", "iso-A");
            for (String segmentId : foreignSegments.getOrDefault(other, List.of())) {
                if (foreignSegments.getOrDefault(a.partition, List.of()).contains(segmentId)) continue;
                for (String list : a.grant) {
                    HttpResponse<byte[]> r = a.download(segmentId, list);
                    assertTrue(r.statusCode() == 404 || r.statusCode() == 403, why + ": " + r.statusCode());
                }
            }
        }
        // clientId binding: per partition, to the first actor
        Actor a0 = actors.get(0);
        Actor a1 = actors.get(1);
        Actor b0 = actors.get(3);
        String shared = "shared-client-" + run;
        assertEquals(200, a0.post(shared, ping(a0)).statusCode());
        HttpResponse<byte[]> stolen = a1.post(shared, ping(a1));
        assertEquals(400, stolen.statusCode());
        assertTrue(new String(stolen.body()).contains("\"code\":\"sync.invalid_client_id\""), new String(stolen.body()));
        assertEquals(200, b0.post(shared, ping(b0)).statusCode(), "another partition has its own client ids");
    }

    /** A pull of one granted list: the smallest valid request (a request needs a push or a pull, §1.5). */
    private static List<RequestFrame> ping(Actor a) {
        return List.of(new PullHeader(0, 0, 0, PullHeader.ACCEPT_INLINE_ROWS), new Subscription("ping", "todos",
                Map.of("list_id", List.of(a.grant.get(0))), null, -1, null));
    }

    /** Checks and applies one pull section of actor {@code a}. */
    private void pulled(Actor a, String list, boolean granted, ResponseMessage m, Map<String, List<String>> segments,
                        String why) throws Exception {
        SubStart start = (SubStart) m.frames().get(1);
        if (!granted) {
            assertEquals(SubStart.Status.REVOKED, start.status(), why);
            assertEquals(3, m.frames().size(), why + ": a revoked section carries nothing");
            return;
        }
        Map<String, String> replica = a.replica.computeIfAbsent(list, k -> new TreeMap<>());
        for (ResponseFrame f : m.frames()) {
            List<RowsSegment.Row> rows = new ArrayList<>();
            if (f instanceof SegmentInline s) {
                RowsSegmentDecoder.decode(s.payload()).blocks().forEach(rows::addAll);
            } else if (f instanceof SegmentRef ref) {
                segments.computeIfAbsent(a.partition, k -> new ArrayList<>()).add(ref.segmentId());
                HttpResponse<byte[]> r = a.download(ref.segmentId(), list);
                assertEquals(200, r.statusCode(), why);
                RowsSegmentDecoder.decode(r.body()).blocks().forEach(rows::addAll);
            } else if (f instanceof CommitFrame c) {
                assertTrue(c.actorId().startsWith(a.partition.substring(4, 5) + "-actor"),
                        why + ": commit by " + c.actorId() + " reached " + a.name);
                for (CommitFrame.Change ch : c.changes()) {
                    assertEquals(Map.of("list_id", list), ch.scopes(), why);
                    if (ch.op() == Op.DELETE) {
                        replica.remove(ch.rowId());
                    } else {
                        Object[] v = RowCodec.decode(SyncTestClient.TODOS, ch.row());
                        assertOwn(a, list, v, why);
                        replica.put(ch.rowId(), (String) v[2]);
                    }
                }
            } else if (f instanceof SubEnd e) {
                a.cursor.put(list, e.nextCursor());
                a.bootstrap.put(list, e.bootstrapStateJson());
            }
            for (RowsSegment.Row row : rows) {
                assertOwn(a, list, row.values(), why);
                replica.put((String) row.values()[0], (String) row.values()[2]);
            }
        }
    }

    private static void assertOwn(Actor a, String list, Object[] values, String why) {
        assertEquals(list, values[1], why + ": a row outside the requested, granted list");
        assertTrue(a.grant.contains((String) values[1]), why + ": a row outside the grant");
        assertTrue(((String) values[2]).startsWith(a.partition + "|"),
                why + ": " + a.name + " received a row of another partition: " + values[2]);
    }
}

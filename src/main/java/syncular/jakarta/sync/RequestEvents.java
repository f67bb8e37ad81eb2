package syncular.jakarta.sync;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.Identity;
import syncular.jakarta.wire.CommitFrame;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RequestMessage;
import syncular.jakarta.wire.ResponseFrame;
import syncular.jakarta.wire.ResponseMessage;
import syncular.jakarta.wire.SegmentInline;
import syncular.jakarta.wire.SegmentRef;
import syncular.jakarta.wire.SubEnd;
import syncular.jakarta.wire.SubStart;

/**
 * What a handled request tells an operator (issue 20), read from the request and the response the client gets, so
 * the events say exactly what was answered: one {@code push.*} per PUSH_RESULT (applied, replayed, rejected or
 * conflicted, §6) and one {@code pull.served} per pull (§3). Emitted only after the response was verified, so an
 * applied push's event follows its COMMIT.
 */
final class RequestEvents {
    private RequestEvents() { }

    static void emit(ServerEvents events, long atMs, Identity identity, RequestMessage request,
                     ResponseMessage response) {
        if (events == ServerEvents.NONE) return;
        String clientId = request.header().clientId();
        Map<String, Integer> operations = new HashMap<>();
        for (PushCommit c : request.pushCommits()) operations.put(c.clientCommitId(), c.operations().size());
        int subscriptions = 0;
        int bootstraps = 0;
        int commits = 0;
        int changes = 0;
        int segments = 0;
        long bootstrapBytes = 0;
        long nextCursor = -1;
        for (ResponseFrame f : response.frames()) {
            if (f instanceof PushResult r) {
                events.emit(push(atMs, identity, clientId, r, operations.getOrDefault(r.clientCommitId(), 0)));
            } else if (f instanceof SubStart s) {
                subscriptions++;
                if (s.bootstrap()) bootstraps++;
            } else if (f instanceof CommitFrame c) {
                commits++;
                changes += c.changes().size();
            } else if (f instanceof SegmentRef ref) {
                segments++;
                bootstrapBytes += ref.byteLength();
            } else if (f instanceof SegmentInline inline) {
                bootstrapBytes += inline.payload().length;
            } else if (f instanceof SubEnd end) {
                nextCursor = Math.max(nextCursor, end.nextCursor());
            }
        }
        if (request.pullHeader().isPresent()) {
            events.emit(new ServerEvent.PullServed(atMs, identity.partition(), identity.actorId(), clientId,
                    subscriptions, bootstraps, commits, changes, segments, bootstrapBytes, nextCursor));
        }
    }

    private static ServerEvent push(long atMs, Identity identity, String clientId, PushResult r, int operations) {
        String partition = identity.partition();
        String actor = identity.actorId();
        if (r.status() != PushResult.Status.REJECTED) {
            return new ServerEvent.PushApplied(atMs, partition, actor, clientId, r.clientCommitId(), r.commitSeq(),
                    operations, r.status() == PushResult.Status.CACHED);
        }
        List<PushResult.OpResult> results = r.results();
        int conflicts = 0;
        String firstError = null;
        for (PushResult.OpResult o : results) {
            if (o instanceof PushResult.Conflict) conflicts++;
            else if (o instanceof PushResult.OpError e && firstError == null) firstError = e.code();
        }
        if (conflicts > 0 && firstError == null) {
            return new ServerEvent.PushConflicted(atMs, partition, actor, clientId, r.clientCommitId(), operations,
                    conflicts);
        }
        return new ServerEvent.PushRejected(atMs, partition, actor, clientId, r.clientCommitId(), operations,
                firstError);
    }
}

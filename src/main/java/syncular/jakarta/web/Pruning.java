package syncular.jakarta.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.storage.CommitPruneResult;
import syncular.jakarta.sync.Retention;

/**
 * One prune of one partition's log (SPEC §4.6), whoever asks: the retention timer on every node, or an operator
 * from the console. A horizon that moved is a {@code prune.completed} event, and this node's sockets left behind it
 * are woken ({@code reset-required}); other nodes learn of it at their own timer's next tick.
 */
@ApplicationScoped
public class Pruning {
    @Inject
    RealtimeService realtime;
    @Inject
    Telemetry telemetry;

    /** {@code trigger}: {@code timer} or {@code operator}, as the event says. */
    public CommitPruneResult prune(SyncRuntime.Parts parts, Retention policy, String partition, String trigger) {
        long now = parts.clock().nowMs();
        CommitPruneResult r = policy.prune(parts.storage(), partition, now);
        if (r.horizonSeq() > r.previousHorizonSeq()) {
            telemetry.events().emit(new ServerEvent.PruneCompleted(now, partition, r.previousHorizonSeq(),
                    r.horizonSeq(), r.removedCommits(), trigger));
        }
        realtime.runningHub().ifPresent(h -> h.horizonAdvanced(partition, r.horizonSeq()));
        return r;
    }
}

package syncular.jakarta.web;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.DependsOn;
import jakarta.ejb.EJB;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.Timeout;
import jakarta.ejb.TimerConfig;
import jakarta.ejb.TimerService;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import syncular.jakarta.storage.PartitionRegistryEntry;

/**
 * Prunes every partition's commit log and sweeps expired segments on a schedule (SPEC §4.6, §5.1,
 * {@code syncular.retention.*}). Every node ticks;
 * pruning is idempotent and epoch-checked, so concurrent nodes at worst repeat work. Not persistent: each node
 * schedules its own tick at start.
 */
@Singleton
@Startup
@DependsOn("ServerLifecycle") // configuration is read (and refused, naming the key) once, there
@ConcurrencyManagement(ConcurrencyManagementType.CONTAINER) // default WRITE lock: a slow tick delays the next
public class RetentionTimer {
    private static final System.Logger LOG = System.getLogger(RetentionTimer.class.getName());

    @Resource
    TimerService timers;
    @Inject
    SyncRuntime runtime;
    @EJB
    ServerLifecycle lifecycle;
    @Inject
    Pruning pruning;

    private SyncularConfig.RetentionSettings settings;

    @PostConstruct
    void schedule() {
        settings = lifecycle.config().retention();
        if (!settings.enabled()) {
            LOG.log(Level.INFO, "commit-log pruning is off (syncular.retention.enabled=false)");
            return;
        }
        timers.createIntervalTimer(settings.intervalMs(), settings.intervalMs(), new TimerConfig(null, false));
    }

    @Timeout
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // each prune runs its own transaction
    void tick() {
        runtime.parts().ifPresent(parts -> {
            try {
                int swept = parts.segments().sweepExpired(parts.clock().nowMs());
                if (swept > 0) LOG.log(Level.DEBUG, "swept {0} expired segment(s)", swept);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "sweeping expired segments failed; the next tick retries", e);
            }
            for (PartitionRegistryEntry p : parts.storage().listPartitionRegistry()) {
                try {
                    // every node runs this timer, so sockets on every node learn of the horizon within an interval
                    long horizon = pruning.prune(parts, settings.policy(), p.partition(), "timer").horizonSeq();
                    LOG.log(Level.DEBUG, "pruned partition; horizon {0}", horizon);
                } catch (RuntimeException e) {
                    // one partition's failure must not starve the others; the next tick retries
                    LOG.log(Level.WARNING, "pruning a partition failed; the next tick retries", e);
                }
            }
        });
    }
}

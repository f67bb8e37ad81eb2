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
import syncular.jakarta.sync.BlobSweep;

/**
 * Deletes orphan blobs on a schedule (SPEC §5.9.2, {@code syncular.blobs.sweep.*}): those no row has referenced for
 * the grace period. Every node ticks; the sweep deletes only what is still old and unreferenced, so concurrent nodes
 * at worst repeat look-ups. Not persistent: each node schedules its own tick at start.
 */
@Singleton
@Startup
@DependsOn("ServerLifecycle") // configuration is read (and refused, naming the key) once, there
@ConcurrencyManagement(ConcurrencyManagementType.CONTAINER) // default WRITE lock: a slow sweep delays the next
public class BlobSweepTimer {
    private static final System.Logger LOG = System.getLogger(BlobSweepTimer.class.getName());

    @Resource
    TimerService timers;
    @Inject
    SyncRuntime runtime;
    @EJB
    ServerLifecycle lifecycle;

    private SyncularConfig.BlobSettings settings;

    @PostConstruct
    void schedule() {
        settings = lifecycle.config().blobs();
        if (!settings.sweepEnabled()) {
            LOG.log(Level.INFO, "the orphan blob sweep is off (syncular.blobs.sweep.enabled=false)");
            return;
        }
        timers.createIntervalTimer(settings.sweepIntervalMs(), settings.sweepIntervalMs(), new TimerConfig(null, false));
    }

    @Timeout
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // each delete is a statement of its own
    void tick() {
        runtime.parts().ifPresent(parts -> {
            try {
                BlobSweep.Result r = BlobSweep.sweep(parts.blobs(), parts.storage(), parts.clock().nowMs(),
                        settings.sweepGraceMs());
                if (r.deleted() > 0 || r.incompleteUploads() > 0) {
                    LOG.log(Level.INFO, "swept {0} orphan blob(s) and {1} incomplete upload(s); {2} old blob(s) "
                            + "still referenced", r.deleted(), r.incompleteUploads(), r.kept());
                }
            } catch (RuntimeException e) {
                // if it escaped, the container would retry outside our pacing
                LOG.log(Level.WARNING, "the orphan blob sweep failed; the next tick retries", e);
            }
        });
    }
}

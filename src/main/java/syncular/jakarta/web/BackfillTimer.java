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

/**
 * Drives RFC 0007 backfills (issue 7, STYLE §6.9): every node ticks, each tick starts the node's
 * {@link BackfillWorker} drain unless one runs, and the database elects one worker per batch
 * ({@code pg_try_advisory_xact_lock} inside each batch transaction). Each tick also re-evaluates the serve gate for
 * readiness (DOWN while this process must refuse) and raises the writer fence of partitions first seen after the
 * migration. Not persistent: each node schedules its own tick; the interval is configuration
 * ({@code syncular.backfill.interval-ms}), so the timer is programmatic.
 */
@Singleton
@Startup
@DependsOn("ServerLifecycle") // configuration is read (and refused, naming the key) once, there
@ConcurrencyManagement(ConcurrencyManagementType.CONTAINER) // default WRITE lock: a slow tick delays the next
public class BackfillTimer {
    private static final System.Logger LOG = System.getLogger(BackfillTimer.class.getName());

    @Resource
    TimerService timers;
    @Inject
    SyncRuntime runtime;
    @EJB
    ServerLifecycle lifecycle;
    @EJB
    BackfillWorker worker;

    private SyncularConfig.BackfillSettings settings;

    @PostConstruct
    void schedule() {
        settings = lifecycle.config().backfill();
        if (!settings.enabled()) {
            LOG.log(Level.INFO, "the backfill runner is off on this node (syncular.backfill.enabled=false); "
                    + "declarations still apply");
        }
        timers.createIntervalTimer(settings.intervalMs(), settings.intervalMs(), new TimerConfig(null, false));
    }

    @Timeout
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED) // each batch opens its own transaction
    void tick() {
        runtime.parts().ifPresent(parts -> {
            try {
                if (settings.enabled() && !parts.declarations().names().isEmpty()) {
                    // the runner of the runtime now in place: a conformance reset or a restart replaces it whole
                    int raised = parts.storage().raiseRegistryFences(parts.schema().version());
                    if (raised > 0) {
                        LOG.log(Level.INFO, "raised the writer fence of {0} partition(s) first seen after the "
                                + "migration to schema version {1}", raised, parts.schema().version());
                    }
                    if (!worker.running()) worker.drain(settings.pauseMs());
                }
                runtime.refreshServeGate();
            } catch (RuntimeException e) {
                // escaping, it would make the container retry outside our pacing (STYLE §6.9)
                LOG.log(Level.WARNING, "backfill tick failed; the next tick retries", e);
            }
        });
    }
}

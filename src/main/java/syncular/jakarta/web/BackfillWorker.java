package syncular.jakarta.web;

import jakarta.annotation.PreDestroy;
import jakarta.ejb.Asynchronous;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs this node's backfill batches back to back (issue 21), on a container thread of its own, started by
 * {@link BackfillTimer}'s tick whenever no drain runs. The timer alone set the pace before: Payara delivers EJB timers
 * at most about once a second, so a tick's budget of batches every second let a node backfill only part of the time
 * (a few hundred rows a second inside the container, against tens of thousands through the same runner on plain
 * JDBC). A drain ends when a tick writes nothing (done, another node holds the batches, or a batch failed and was
 * logged); the next timer tick starts another. Live traffic is protected by the runner's pacer, and an operator may
 * add a fixed pause between batches ({@code syncular.backfill.pause-ms}).
 */
@Singleton
@ConcurrencyManagement(ConcurrencyManagementType.BEAN) // the drain guards itself; the timer only asks
public class BackfillWorker {
    private static final System.Logger LOG = System.getLogger(BackfillWorker.class.getName());

    @Inject
    SyncRuntime runtime;

    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean stopping;

    /** Whether a drain runs now (the timer then starts none). */
    public boolean running() { return running.get(); }

    /**
     * Drains the runner of the runtime in place now, unless a drain already runs or the application stops. Each
     * batch is its own transaction ({@code NOT_SUPPORTED}: none of the container's around it).
     */
    @Asynchronous
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public void drain(long pauseMs) {
        if (stopping || !running.compareAndSet(false, true)) return;
        try {
            SyncRuntime.Parts parts = runtime.parts().orElse(null);
            if (parts == null || parts.declarations().names().isEmpty()) return;
            // a conformance reset or a restart replaces the runtime whole: this drain ends, the next tick's uses it
            parts.backfill().drain(pauseMs * 1_000_000, () -> !stopping && runtime.parts().orElse(null) == parts);
        } catch (RuntimeException e) {
            // the runner logs a failed batch itself; this is anything around it (the next tick starts over)
            LOG.log(Level.WARNING, "backfill drain failed; the next timer tick starts another", e);
        } finally {
            running.set(false);
        }
    }

    /** Undeploy: the drain stops after the batch in flight (a batch cut off mid-way rolls back whole anyway). */
    @PreDestroy
    void stop() { stopping = true; }
}

package syncular.jakarta.migration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import syncular.jakarta.events.ServerEvent;
import syncular.jakarta.events.ServerEvents;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.host.BackfillDefinition.ProjectionWrite;
import syncular.jakarta.host.BackfillDefinition.SourceRow;
import syncular.jakarta.host.Clock;
import syncular.jakarta.host.Identity;
import syncular.jakarta.schema.ColumnSchema;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.schema.TableSchema;
import syncular.jakarta.storage.ActivationOutcome;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.PendingCheckpoint;
import syncular.jakarta.storage.ServerStorage;
import syncular.jakarta.storage.SourceCoverage;
import syncular.jakarta.storage.StorageErrorCode;
import syncular.jakarta.storage.StorageException;
import syncular.jakarta.storage.StorageTransaction;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.StoredRow;
import syncular.jakarta.storage.UnitTransactions;
import syncular.jakarta.sync.PushProcessor;
import syncular.jakarta.sync.ServeGatePolicy;
import syncular.jakarta.wire.Json;
import syncular.jakarta.wire.PushCommit;
import syncular.jakarta.wire.PushResult;
import syncular.jakarta.wire.RowCodec;
import syncular.jakarta.wire.WireVersion;

/**
 * Fills declared projections and activates them (issue 7, UPSTREAM-SERVER §3.4 host loop). Driven by a timer; every
 * node ticks and the database elects one worker per batch.
 *
 * <p>One batch is ONE transaction, in this order: {@code pg_try_advisory_xact_lock} on (partition, name) — not
 * acquired means another transaction runs this checkpoint's batch, so skip; claim (owner epoch + 1); read the pass
 * position; read up to the pacer's batch size of source rows after it; the definition's step; the writes through the
 * push path ({@link PushProcessor#pushRowsFirst}: the projection rows read, locked and written first, then the
 * partition lock, serve gate on that connection, idempotency re-check, writer version and the append) as the
 * reserved client {@code ["backfill",<name>]} with a system actor holding a wildcard grant and the deterministic
 * clientCommitId {@code <owner_epoch>:<pass>:<position>}, last, so pushes wait for nothing else of the batch than
 * its append (issue 21), after {@code tx.advanceCheckpoint} with the pass's watermark and the new pass position. All
 * of it commits together or not at all: a crash rolls the whole batch back, claim included, and the next tick redoes
 * exactly that batch. A batch whose rows a push wants gives way ({@link #yielded}): rolled back, redone by the next
 * tick as an ordinary push, partition lock first. Transaction-scoped locks only: a session lock would survive
 * {@code close()} on a pooled connection (ARCHITECTURE, STYLE §6.6).
 *
 * <p>Positions: the watermark is {@code sourceCoverageSeq} captured when a pass starts, passed unchanged to every
 * advance of the pass and to the activation. When a pass is exhausted the runner activates: {@code stale} (a source
 * change above the watermark) → a catch-up pass over the rows the log changed in (watermark, new coverage], with the
 * new coverage as watermark; {@code unverifiable} (pruned past the watermark) → a fresh full pass. The decision is
 * re-derived from the database by the next batch, so it survives a crash between activation and the next tick.
 */
public final class BackfillRunner {
    private static final System.Logger LOG = System.getLogger(BackfillRunner.class.getName());
    /** The system actor of backfill commits (never a client's actor: clients cannot push as a reserved clientId). */
    public static final String SYSTEM_ACTOR = "syncular-backfill";
    /** A progress line every this many batches of a pass (the first batch of a pass logs too). */
    static final int PROGRESS_EVERY = 20;

    private final ServerStorage storage;
    private final UnitTransactions units;
    private final Supplier<CompiledSchema> schema;
    private final Declarations declarations;
    private final Clock clock;
    private final BackfillPacer pacer;
    /** The ordinary push path, run on each batch's own transaction; backfills run no host validators. */
    private final PushProcessor processor;
    private final ServerEvents events;
    /**
     * The checkpoints (partition NUL name) whose last batch yielded: their next batch is an ordinary push, partition
     * lock first, which cannot yield, so a row pushes keep writing (or an index entry the rows-first insert does not
     * expect) costs one retry, never a loop.
     */
    private final Set<String> yieldedLast = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static String checkpointKey(String partition, String name) { return partition + "\u0000" + name; }

    /**
     * {@code maxBatchSize}: source rows per batch at most; {@code maxPushWaitMs}: while others push to the partition,
     * how long a batch's rows may hold its push lock; {@code maxPushP95Ms}: the p95 of this node's pushes the pauses
     * between batches steer to, 0 for relative to their p95 with the backfill paused ({@link BackfillPacer});
     * {@code events}: a {@code backfill.batch} event per batch written (issue 20); {@code units}: where each batch
     * and activation gets its transaction ({@link UnitTransactions#of} the storage's runner, or in the container
     * {@code web.BackfillBatches}).
     */
    public BackfillRunner(ServerStorage storage, UnitTransactions units, Supplier<CompiledSchema> schema,
                          Declarations declarations, Clock clock, int maxBatchSize, long maxPushWaitMs,
                          long maxPushP95Ms, ServerEvents events) {
        this.units = units;
        this.events = events;
        this.pacer = new BackfillPacer(maxBatchSize, maxPushWaitMs, maxPushP95Ms, System::nanoTime);
        this.storage = storage;
        this.schema = schema;
        this.declarations = declarations;
        this.clock = clock;
        this.processor = new PushProcessor(storage, clock, syncular.jakarta.sync.Validation.NONE,
                syncular.jakarta.sync.DeclaredReferences.DEFAULT_MAX_CASCADE_OPERATIONS);
    }

    /**
     * A pushing request this node answered in {@code durationNanos}: what the pacer sizes batches against (fed from
     * the node's {@code request.handled} events).
     */
    public void pushServed(long durationNanos) { pacer.pushServed(durationNanos); }

    /** The reserved clientId of a definition's commits (issue 7). */
    public static String clientId(String name) { return Json.write(List.of("backfill", name)); }

    /**
     * What one batch did. {@code commitSeq}: its own commit (0 when it wrote nothing); {@code lockedAtNanos}: when it
     * took the partition's push lock ({@link System#nanoTime()}, 0 when it did not); {@code passRows}: the pass's
     * source rows through this batch; {@code tables}: the projection tables it wrote.
     */
    public record Batch(Kind kind, long ownerEpoch, int pass, long watermark, int sourceRows, int writes,
                        String clientCommitId, boolean passExhausted, long commitSeq, long lockedAtNanos,
                        long passRows, List<String> tables) {
        public enum Kind {
            /** Another transaction holds this checkpoint's batch lock. */
            SKIPPED,
            /** The checkpoint is activated (or gone): nothing to claim. */
            DONE,
            /** A batch was written and the position moved. */
            WROTE,
            /** The pass is exhausted and the log shows nothing above its watermark: activate now. */
            READY
        }
    }

    /** What one tick did, summed over the checkpoints. */
    public record Tick(int batches, int skipped, int activated, int stale, int unverifiable) {
        Tick plus(Tick o) {
            return new Tick(batches + o.batches, skipped + o.skipped, activated + o.activated, stale + o.stale,
                    unverifiable + o.unverifiable);
        }
    }

    /**
     * Ticks back to back while batches keep being written and {@code keepGoing} says so (at least one tick), with
     * {@code pauseNanos} between ticks (an operator's throttle; 0 for none): how a
     * node backfills at the runner's own pace rather than the timer's (Payara delivers EJB timers at most about once
     * a second, and a tick that ran one batch per delivery backfilled a few hundred rows a second inside the
     * container). Ends at the first tick that writes nothing: the checkpoints are activated, another node holds
     * their batches, or a batch failed (logged; the next drain retries it). Each batch is its own transaction and
     * releases the partition lock at its end, so pushes interleave between batches; while others push to the
     * partition the pacer keeps each batch's hold of the lock short ({@link BackfillPacer}).
     */
    public Tick drain(long pauseNanos, java.util.function.BooleanSupplier keepGoing) {
        Tick last = tick();
        Tick sum = last;
        while (last.batches() > 0 && keepGoing.getAsBoolean()) {
            // the operator's pause, or longer when the pacer probes the pushes' latency without the backfill
            long pause = Math.max(pauseNanos, pacer.pauseNanos());
            if (pause > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(pause);
                if (Thread.currentThread().isInterrupted() || !keepGoing.getAsBoolean()) break;
            }
            last = tick();
            sum = sum.plus(last);
        }
        return sum;
    }

    /**
     * One batch of each pending checkpoint this process declares, then an activation attempt where the batch
     * finished its pass. A failure of one checkpoint is logged and does not starve the others.
     */
    public Tick tick() { return tick(p -> true, false); }

    /**
     * An operator's retry (issue 20): one batch of {@code name} in {@code partition} now, and its activation if the
     * pass ends, instead of at the timer's next tick; a failure reaches the caller instead of the log. Empty when
     * this process does not declare such a pending checkpoint.
     */
    public Optional<Tick> retry(String partition, String name) {
        boolean pending = storage.pendingCheckpoints(declarations.runningVersion(), declarations.names()).stream()
                .anyMatch(p -> p.partition().equals(partition) && p.name().equals(name));
        if (!pending) return Optional.empty();
        return Optional.of(tick(p -> p.partition().equals(partition) && p.name().equals(name), true));
    }

    private Tick tick(java.util.function.Predicate<PendingCheckpoint> which, boolean rethrow) {
        int batches = 0;
        int skipped = 0;
        int activated = 0;
        int stale = 0;
        int unverifiable = 0;
        for (PendingCheckpoint p : storage.pendingCheckpoints(declarations.runningVersion(), declarations.names())) {
            if (!which.test(p)) continue;
            BackfillDefinition def = declarations.definition(p.name()).orElseThrow();
            try {
                long started = System.nanoTime();
                Batch b = runBatch(p.partition(), def);
                long batchMs = (System.nanoTime() - started) / 1_000_000;
                boolean activatedNow = false;
                if (b.kind() == Batch.Kind.SKIPPED) skipped++;
                if (b.kind() == Batch.Kind.WROTE) batches++;
                if (b.commitSeq() > 0) {
                    // the batch's transaction has committed: the lock was held from its take until now
                    pacer.observe(p.partition(), b.sourceRows(), b.commitSeq(), System.nanoTime() - b.lockedAtNanos());
                }
                // activate as soon as a pass ends; STALE/UNVERIFIABLE are re-derived by the next batch
                if (b.kind() == Batch.Kind.READY || (b.kind() == Batch.Kind.WROTE && b.passExhausted())) {
                    switch (activate(p.partition(), def)) {
                        case ACTIVATED -> {
                            activated++;
                            activatedNow = true;
                        }
                        case STALE -> stale++;
                        case UNVERIFIABLE -> unverifiable++;
                    }
                }
                if (b.kind() == Batch.Kind.WROTE || activatedNow) {
                    events.emit(new ServerEvent.BackfillBatch(clock.nowMs(), p.partition(), p.name(), b.sourceRows(),
                            b.writes(), batchMs, b.commitSeq() > 0 ? Math.max(0, b.commitSeq() - b.watermark()) : 0,
                            activatedNow));
                }
            } catch (RuntimeException e) {
                if (rethrow) throw e;
                if (yielded(e)) {
                    // a push wanted one of the batch's rows, or the lock took longer than the yield timeout: the
                    // push went first, as it must; nothing of the batch committed
                    yieldedLast.add(checkpointKey(p.partition(), p.name()));
                    LOG.log(System.Logger.Level.INFO, "backfill batch of {0} in partition {1} yielded to a push "
                            + "({2}) and rolled back; the next tick retries it under the partition lock",
                            p.name(), p.partition(), e);
                    continue;
                }
                LOG.log(System.Logger.Level.WARNING, "backfill batch of " + p.name() + " in partition "
                        + p.partition() + " failed and rolled back; the next tick retries it", e);
            }
        }
        return new Tick(batches, skipped, activated, stale, unverifiable);
    }

    /**
     * Whether a batch failed because it gave way to a push ({@link PushProcessor#pushRowsFirst}): a row changed
     * between its read and its write, or its yield timeout ended a lock wait. The container may wrap either.
     */
    static boolean yielded(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PushProcessor.RowsChanged) return true;
            if (t instanceof StorageException s && s.code() == StorageErrorCode.LOCK_NOT_AVAILABLE) return true;
        }
        return false;
    }

    /** Runs until every checkpoint this process declares is activated or {@code maxTicks} ticks passed. */
    public int runToCompletion(int maxTicks) {
        for (int i = 1; i <= maxTicks; i++) {
            tick();
            if (storage.pendingCheckpoints(declarations.runningVersion(), declarations.names()).isEmpty()) return i;
        }
        return -1;
    }

    /** One batch transaction, exactly as the class comment says. */
    public Batch runBatch(String partition, BackfillDefinition def) {
        CompiledSchema running = schema.get();
        boolean rowsFirst = !yieldedLast.remove(checkpointKey(partition, def.name()));
        List<String> sources = def.sourceTables().stream().sorted().toList();
        Batch batch = units.backfillBatch(partition, tx -> {
            if (!tx.tryLockBackfillBatch(def.name())) {
                return new Batch(Batch.Kind.SKIPPED, 0, 0, 0, 0, 0, null, false, 0, 0, 0, List.of());
            }
            long now = clock.nowMs();
            Optional<StoredCheckpoint> claimed = tx.claimCheckpoint(def.name(), running.version(), now);
            if (claimed.isEmpty()) return new Batch(Batch.Kind.DONE, 0, 0, 0, 0, 0, null, false, 0, 0, 0, List.of());
            long epoch = claimed.get().ownerEpoch();
            Optional<BackfillPass> stored = tx.readBackfillPass(def.name());
            BackfillPass pass;
            if (stored.isEmpty()) {
                pass = BackfillPass.fullFrom(partition, def.name(), 1, watermarkOn(tx, sources), now);
                logPassStart(pass, epoch, "first pass");
            } else if (stored.get().exhausted()) {
                BackfillPass last = stored.get();
                SourceCoverage coverage = tx.sourceChangesAbove(sources, last.watermark());
                if (coverage == SourceCoverage.CLEAN) {
                    return new Batch(Batch.Kind.READY, epoch, last.pass(), last.watermark(), 0, 0, null, true, 0, 0,
                            last.passRows(), List.of());
                }
                long now2 = watermarkOn(tx, sources);
                pass = coverage == SourceCoverage.CHANGED
                        ? BackfillPass.catchUpFrom(partition, def.name(), last.pass() + 1, last.watermark(), now2, now)
                        : BackfillPass.fullFrom(partition, def.name(), last.pass() + 1, now2, now);
                logPassStart(pass, epoch, coverage == SourceCoverage.CHANGED
                        ? "stale: source changes above watermark " + last.watermark()
                        : "unverifiable: the log was pruned past watermark " + last.watermark());
            } else {
                pass = stored.get();
            }

            int limit = pacer.batchSize();
            Read read = pass.mode() == BackfillPass.Mode.FULL
                    ? readFull(tx, running, sources, pass, limit)
                    : readCatchUp(tx, running, sources, pass, limit);
            List<ProjectionWrite> writes = read.rows.isEmpty() ? List.of() : def.step(read.rows);
            String ccid = epoch + ":" + pass.pass() + ":" + pass.positionKey();
            long observed = claimed.get().observedRows() + read.rows.size();
            if (!tx.advanceCheckpoint(def.name(), epoch, pass.watermark(), observed, now)) {
                // superseded between our claim and here: nothing of this batch may commit
                throw new StorageException(StorageErrorCode.CHECKPOINT_NOT_DECLARED,
                        Map.of("partition", partition, "name", def.name()));
            }
            BackfillPass next = read.next;
            tx.saveBackfillPass(next);
            // last: pushes wait from the push's lock until the commit, so nothing else of the batch runs under it
            // (the claim already holds the checkpoint row, as it always did); the pacer bounds the hold from when the
            // lock was granted, not the wait behind the pushes queued first
            Appended appended = writes.isEmpty() ? new Appended(0, 0)
                    : push(tx, running, partition, def.name(), ccid, writes, rowsFirst);
            if (next.batches() == 1 || next.batches() % PROGRESS_EVERY == 0 || next.exhausted()) {
                LOG.log(System.Logger.Level.INFO, "backfill {0} partition {1}: pass {2} ({3}) batch {4}, {5} rows "
                                + "this pass, watermark {6}, owner epoch {7}{8}", def.name(), partition, next.pass(),
                        next.mode(), next.batches(), next.passRows(), next.watermark(), epoch,
                        next.exhausted() ? ", pass exhausted" : "");
            }
            return new Batch(Batch.Kind.WROTE, epoch, next.pass(), next.watermark(), read.rows.size(), writes.size(),
                    writes.isEmpty() ? null : ccid, next.exhausted(), appended.commitSeq(), appended.lockedAtNanos(),
                    next.passRows(),
                    writes.stream().map(ProjectionWrite::table).distinct().sorted().toList());
        });
        boolean milestone = statisticsMilestone(batch.passRows() - batch.sourceRows(), batch.passRows());
        if (!batch.tables().isEmpty() && milestone) {
            // committed: the projection grew past a milestone, so the planner is told before the next batch plans
            storage.refreshPlannerStatistics(batch.tables());
        }
        return batch;
    }

    /** A pass's first milestone; the next ones double it (1,000, 2,000, 4,000, ... source rows). */
    static final long FIRST_STATISTICS_MILESTONE = 1_000;

    /**
     * Whether a batch that took a pass from {@code before} to {@code after} source rows crossed a milestone at
     * which the projection's planner statistics are refreshed ({@link ServerStorage#refreshPlannerStatistics}):
     * the statistics then never lag the projection by more than half, at a dozen refreshes over a million rows.
     */
    static boolean statisticsMilestone(long before, long after) {
        for (long m = FIRST_STATISTICS_MILESTONE; m <= after; m *= 2) {
            if (before < m) return true;
        }
        return false;
    }

    /** Rows the activation may still project under the partition lock, whatever the pacer's batch size. */
    static final int CLOSE_OUT_MIN_ROWS = 64;

    /**
     * Activation after a pass ended, in one transaction that holds the partition's push lock from before it looks at
     * the log: the source changes that landed above the pass's watermark meanwhile (at most a batch, else the
     * ordinary catch-up passes go on) are projected on that transaction, the watermark moves to the frozen log head,
     * and the checkpoint activates, all committing together. With the lock held no writer can slip a change in
     * between, so continuous writers can no longer keep the activation stale forever (each pass used to end with
     * a few fresh changes above its watermark). Logs the outcome.
     */
    public ActivationOutcome activate(String partition, BackfillDefinition def) {
        CompiledSchema running = schema.get();
        List<String> sources = def.sourceTables().stream().sorted().toList();
        long[] at = new long[2];
        ActivationOutcome outcome = units.backfillBatch(partition, tx -> {
            if (!tx.tryLockBackfillBatch(def.name())) return ActivationOutcome.STALE;   // another node's batch runs
            long now = clock.nowMs();
            Optional<StoredCheckpoint> claimed = tx.claimCheckpoint(def.name(), running.version(), now);
            if (claimed.isEmpty()) return ActivationOutcome.ACTIVATED;   // another node activated it meanwhile
            long epoch = claimed.get().ownerEpoch();
            Optional<BackfillPass> last = tx.readBackfillPass(def.name());
            if (last.isEmpty() || !last.get().exhausted()) return ActivationOutcome.STALE;
            tx.lockPartitionForPush();   // from here until the commit no source change lands in this partition
            long watermark = last.get().watermark();
            SourceCoverage coverage = tx.sourceChangesAbove(sources, watermark);
            if (coverage == SourceCoverage.UNVERIFIABLE) return ActivationOutcome.UNVERIFIABLE;
            if (coverage == SourceCoverage.CHANGED) {
                long through = tx.sourceCoverageSeq(sources);
                BackfillPass tail = BackfillPass.catchUpFrom(partition, def.name(), last.get().pass() + 1, watermark,
                        through, now);
                Read read = readCatchUp(tx, running, sources, tail, Math.max(pacer.batchSize(), CLOSE_OUT_MIN_ROWS));
                if (!read.next.exhausted()) return ActivationOutcome.STALE;   // more than a batch: passes go on
                if (!tx.advanceCheckpoint(def.name(), epoch, through, claimed.get().observedRows() + read.rows.size(),
                        now)) {
                    return ActivationOutcome.STALE;
                }
                tx.saveBackfillPass(read.next);
                List<ProjectionWrite> writes = read.rows.isEmpty() ? List.of() : def.step(read.rows);
                if (!writes.isEmpty()) {
                    push(tx, running, partition, def.name(), epoch + ":" + tail.pass() + ":" + tail.positionKey(),
                            writes, false);
                }
                watermark = through;
                at[1] = read.rows.size();
            }
            at[0] = watermark;
            return tx.activateCheckpoint(def.name(), epoch, watermark, sources, now);
        });
        LOG.log(outcome == ActivationOutcome.ACTIVATED ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                "backfill {0} partition {1}: activation at watermark {2} ({3} rows projected under the lock): {4}{5}",
                def.name(), partition, at[0], at[1], outcome, switch (outcome) {
                    case ACTIVATED -> "";
                    case STALE -> " (the next batch starts a catch-up pass from the change log)";
                    case UNVERIFIABLE -> " (the next batch starts a fresh full pass)";
                });
        return outcome;
    }

    /**
     * The watermark a pass starting now certifies: {@code sourceCoverageSeq}, raised to the pruning horizon when the
     * log was pruned past the last source change. The current rows a pass reads already reflect every commit at or
     * below the horizon, and a watermark below it could never activate (it would stay {@code unverifiable}).
     */
    private static long watermarkOn(StorageTransaction tx, List<String> sources) {
        return Math.max(tx.sourceCoverageSeq(sources), tx.horizonSeq());
    }

    private static void logPassStart(BackfillPass pass, long epoch, String why) {
        LOG.log(System.Logger.Level.INFO, "backfill {0} partition {1}: claimed (owner epoch {2}), pass {3} ({4}) "
                + "starts at watermark {5}: {6}", pass.name(), pass.partition(), epoch, pass.pass(), pass.mode(),
                pass.watermark(), why);
    }

    private record Read(List<SourceRow> rows, BackfillPass next) { }

    /** Keyset over the sorted source tables: (source index, last row id). */
    private Read readFull(StorageTransaction tx, CompiledSchema running, List<String> sources, BackfillPass pass,
                          int batchSize) {
        List<SourceRow> rows = new ArrayList<>();
        int index = pass.sourceIndex();
        String after = pass.afterRowId();
        while (rows.size() < batchSize && index < sources.size()) {
            String table = sources.get(index);
            int want = batchSize - rows.size();
            List<StoredRow> page = tx.scanSourceRows(table, after, want);
            for (StoredRow r : page) rows.add(sourceRow(running, table, r));
            if (page.size() < want) {
                index++;
                after = null;
            } else {
                after = page.get(page.size() - 1).rowId();
            }
        }
        boolean exhausted = index >= sources.size();
        BackfillPass next = new BackfillPass(pass.partition(), pass.name(), pass.pass(), pass.mode(), index, after,
                0, 0, 0, pass.watermark(), exhausted, pass.passRows() + rows.size(), pass.batches() + 1,
                pass.startedAtMs(), clock.nowMs());
        return new Read(rows, next);
    }

    /** The log's changes to the sources in (fromSeq, watermark], each row presented in its current state. */
    private Read readCatchUp(StorageTransaction tx, CompiledSchema running, List<String> sources,
                             BackfillPass pass, int batchSize) {
        List<BackfillPass.ChangedRow> changed = tx.changedRows(sources, pass.afterSeq(), pass.afterIdx(),
                pass.watermark(), batchSize);
        // the changed rows' current states, one read per source table (it was one per row)
        Map<String, Set<String>> idsByTable = new LinkedHashMap<>();
        for (BackfillPass.ChangedRow ch : changed) {
            idsByTable.computeIfAbsent(ch.table(), t -> new LinkedHashSet<>()).add(ch.rowId());
        }
        Map<String, StoredRow> current = new java.util.HashMap<>();
        idsByTable.forEach((table, ids) -> {
            for (StoredRow r : tx.getRows(table, ids)) current.put(table + "\u0000" + r.rowId(), r);
        });
        Set<String> seen = new LinkedHashSet<>();
        List<SourceRow> rows = new ArrayList<>();
        for (BackfillPass.ChangedRow ch : changed) {
            String key = ch.table() + "\u0000" + ch.rowId();
            if (!seen.add(key)) continue;
            StoredRow now = current.get(key);
            rows.add(now != null ? sourceRow(running, ch.table(), now) : new SourceRow(ch.table(), ch.rowId(), null));
        }
        long afterSeq = changed.isEmpty() ? pass.afterSeq() : changed.get(changed.size() - 1).commitSeq();
        int afterIdx = changed.isEmpty() ? pass.afterIdx() : changed.get(changed.size() - 1).idx();
        boolean exhausted = changed.size() < batchSize;
        BackfillPass next = new BackfillPass(pass.partition(), pass.name(), pass.pass(), pass.mode(), 0, null,
                afterSeq, afterIdx, pass.fromSeq(), pass.watermark(), exhausted, pass.passRows() + rows.size(),
                pass.batches() + 1, pass.startedAtMs(), clock.nowMs());
        return new Read(rows, next);
    }

    private static SourceRow sourceRow(CompiledSchema running, String table, StoredRow row) {
        TableSchema t = running.table(table).orElseThrow(() -> new IllegalStateException(
                "backfill source table " + table + " is not in the running schema"));
        Object[] values = RowCodec.decode(t.descriptors(), row.payload());
        Map<String, Object> named = new LinkedHashMap<>();
        for (int i = 0; i < t.columns().size(); i++) named.put(t.columns().get(i).name(), values[i]);
        return new SourceRow(table, row.rowId(), named);
    }

    /**
     * The batch's writes as one PUSH_COMMIT through the push path on THIS transaction (the lock, the gate, the
     * idempotency re-check and the append all land on the batch's connection), so the projection commit and the
     * checkpoint advance cannot commit apart; {@code rowsFirst}: its row writes before the partition lock (a batch),
     * else all of it under the partition lock (the ordinary push: the activation's close-out, whose caller holds it
     * already, and the batch after one that yielded).
     */
    private Appended push(StorageTransaction tx, CompiledSchema running, String partition, String name, String ccid,
                         List<ProjectionWrite> writes, boolean rowsFirst) {
        List<PushCommit.Operation> ops = new ArrayList<>(writes.size());
        for (ProjectionWrite w : writes) {
            TableSchema t = running.table(w.table()).orElseThrow(() -> new IllegalStateException(
                    "backfill " + name + " writes table " + w.table() + ", which is not in the running schema"));
            if (w.values() == null) {
                ops.add(PushCommit.Operation.delete(w.table(), w.rowId(), null));
                continue;
            }
            Object[] values = new Object[t.columns().size()];
            for (int i = 0; i < values.length; i++) {
                ColumnSchema col = t.columns().get(i);
                values[i] = w.values().get(col.name());
            }
            ops.add(PushCommit.Operation.upsert(w.table(), w.rowId(), null, RowCodec.encode(t.descriptors(), values)));
        }
        Map<String, List<String>> everything = new LinkedHashMap<>();
        for (String v : running.variables()) everything.put(v, List.of(syncular.jakarta.sync.Scopes.ANY));
        String clientId = clientId(name);
        PushProcessor.RequestScope scope = new PushProcessor.RequestScope(
                new Identity(SYSTEM_ACTOR, partition, everything), clientId, WireVersion.V2);
        PushProcessor.Batch batch = new PushProcessor.Batch(scope, running, everything,
                List.of(new PushCommit(ccid, ops)),
                underLock -> ServeGatePolicy.enforce(underLock, running.version(), declarations.covering(underLock)));
        PushProcessor.Pushed pushed = rowsFirst ? processor.pushRowsFirst(tx, batch) : processor.pushOn(tx, batch);
        if (pushed.failure() != null) throw pushed.failure();
        PushProcessor.Outcome outcome = pushed.outcomes().get(0);
        if (outcome.result().status() == PushResult.Status.REJECTED) {
            // a definition produced a write the schema refuses: roll the whole batch back and say which
            throw new IllegalStateException("backfill " + name + " batch " + ccid + " was rejected: "
                    + outcome.result().results());
        }
        // a replayed batch (cached: an earlier attempt committed it) took no new seq; the log head stands in
        return new Appended(outcome.appliedCommitSeq() > 0 ? outcome.appliedCommitSeq() : pushed.maxCommitSeq(),
                pushed.lockedAtNanos());
    }

    /**
     * A batch's commit: its seq, and when its push took the partition lock ({@link System#nanoTime()}, 0 without a
     * push).
     */
    private record Appended(long commitSeq, long lockedAtNanos) { }
}

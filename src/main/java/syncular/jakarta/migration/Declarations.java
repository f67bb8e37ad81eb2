package syncular.jakarta.migration;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.storage.CheckpointDeclaration;
import syncular.jakarta.storage.PendingCheckpoint;
import syncular.jakarta.storage.ServeGate;
import syncular.jakarta.storage.ServeGateRefusal;
import syncular.jakarta.storage.ServerStorage;

/**
 * What this process declares (issue 7 "Declarations"): the {@link BackfillDefinition}s for the RUNNING schema version,
 * by name. A pending checkpoint (p, n) counts as declared iff this process has a definition named n for the running
 * version, whatever p is; since the gate predicate matches (partition, name) pairs (seeds/001), the declaration list
 * handed to {@code ensureSchema} and to every gate evaluation is expanded to the partitions concerned:
 * <ul>
 *   <li>before this storage instance has ensured the running version (the migration may still be ahead), every
 *       partition in {@code sync_partitions} ∪ {@code sync_partition_registry} plus every partition already holding a
 *       pending checkpoint of one of the names, so the migration installs one checkpoint and one fence per partition
 *       and the {@code checkpoint_incomplete} barrier sees each pending row declared;</li>
 *   <li>afterwards, the pending checkpoints of those names (one indexed read per request), the only rows the gate
 *       compares against.</li>
 * </ul>
 * A process with no definition for its version declares nothing and reads nothing.
 */
public final class Declarations {
    private final int runningVersion;
    private final Map<String, BackfillDefinition> byName;
    private final ServerStorage storage;

    /**
     * @param all every definition deployed or configured; those for other versions are ignored (they belong to an
     *            earlier or later bump)
     * @throws IllegalArgumentException when two definitions for the running version share a name
     */
    public Declarations(Collection<BackfillDefinition> all, int runningVersion, ServerStorage storage) {
        this.runningVersion = runningVersion;
        this.storage = storage;
        Map<String, BackfillDefinition> map = new LinkedHashMap<>();
        for (BackfillDefinition d : all) {
            if (d.schemaVersion() != runningVersion) continue;
            if (d.sourceTables().isEmpty()) {
                throw new IllegalArgumentException("backfill definition " + d.name() + " names no source table");
            }
            if (map.putIfAbsent(d.name(), d) != null) {
                throw new IllegalArgumentException("two backfill definitions are named " + d.name()
                        + " for schema version " + runningVersion + "; names must be unique per bump (§3.3)");
            }
        }
        this.byName = Map.copyOf(map);
    }

    public int runningVersion() { return runningVersion; }

    public Set<String> names() { return byName.keySet(); }

    public List<BackfillDefinition> definitions() { return List.copyOf(byName.values()); }

    public Optional<BackfillDefinition> definition(String name) { return Optional.ofNullable(byName.get(name)); }

    /** The declaration list for {@code ensureSchema} and the gate, as the class comment describes. */
    public List<CheckpointDeclaration> current() {
        if (byName.isEmpty()) return List.of();
        List<PendingCheckpoint> pending = storage.pendingCheckpoints(runningVersion, byName.keySet());
        List<CheckpointDeclaration> out = new ArrayList<>();
        if (storage.writerVersion() != runningVersion) {
            Set<String> partitions = new LinkedHashSet<>(storage.knownPartitions());
            for (PendingCheckpoint p : pending) partitions.add(p.partition());
            for (String partition : partitions) {
                for (String name : byName.keySet()) out.add(new CheckpointDeclaration(partition, name, runningVersion));
            }
            return out;
        }
        for (PendingCheckpoint p : pending) out.add(new CheckpointDeclaration(p.partition(), p.name(), runningVersion));
        return out;
    }

    /** The declarations covering {@code gate}'s pending checkpoints: those whose name this process has. */
    public List<CheckpointDeclaration> covering(ServeGate gate) {
        List<CheckpointDeclaration> out = new ArrayList<>();
        for (PendingCheckpoint p : gate.pending()) {
            if (byName.containsKey(p.name())) out.add(new CheckpointDeclaration(p.partition(), p.name(), runningVersion));
        }
        return out;
    }

    /**
     * Why the serve gate refuses this process right now, if it does (readiness, logs): evaluated without a
     * partition, since the pending set spans all partitions and only the epoch is per partition.
     */
    public Optional<String> refusal() {
        return storage.readServeGate("", runningVersion).refusal(runningVersion, current()).map(r -> {
            if (r instanceof ServeGateRefusal.Schema s) {
                return "the database holds schema version " + s.stored() + ", this server runs " + s.running();
            }
            if (r instanceof ServeGateRefusal.Checkpoint c) {
                return "projection " + c.name() + " of partition " + c.partition()
                        + " is not activated and this server does not declare it";
            }
            return "the schema changed";
        });
    }
}

package syncular.jakarta.migration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import syncular.jakarta.host.BackfillDefinition;
import syncular.jakarta.host.Clock;
import syncular.jakarta.storage.CheckpointState;
import syncular.jakarta.storage.StoredCheckpoint;
import syncular.jakarta.storage.BackfillPass;
import syncular.jakarta.storage.ServerStorage;

/**
 * The operator's view of every checkpoint (issue 7, {@code GET /syncular/admin/checkpoints}): per partition and
 * name the state, watermark, owner epoch, observed rows, the pass position, the pass's rate and an ETA. The rate is
 * this pass's rows over its elapsed time; the ETA is the rows left in the pass at that rate, computed only for a
 * pending checkpoint whose definition this process has (it knows the sources to count). Never served to clients.
 */
public final class CheckpointReport {
    private CheckpointReport() { }

    /** JSON-ready maps (insertion-ordered), one per checkpoint, ordered by partition and name. */
    public static List<Map<String, Object>> build(ServerStorage storage, Declarations declarations,
                                                  Clock clock) {
        long now = clock.nowMs();
        List<Map<String, Object>> out = new ArrayList<>();
        for (BackfillPass.Progress r : storage.backfillProgress()) {
            StoredCheckpoint c = r.checkpoint();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("partition", c.partition());
            m.put("name", c.name());
            m.put("schemaVersion", (long) c.schemaVersion());
            m.put("state", c.state().stored());
            m.put("watermark", c.watermark());
            m.put("ownerEpoch", c.ownerEpoch());
            m.put("observedRows", c.observedRows());
            m.put("updatedAtMs", c.updatedAtMs());
            m.put("pausedAtMs", c.pausedAtMs());
            Optional<BackfillDefinition> def = c.schemaVersion() == declarations.runningVersion()
                    ? declarations.definition(c.name()) : Optional.empty();
            m.put("declaredHere", def.isPresent());
            if (r.pass().isPresent()) {
                BackfillPass p = r.pass().get();
                Map<String, Object> pass = new LinkedHashMap<>();
                pass.put("number", (long) p.pass());
                pass.put("mode", p.mode().stored());
                pass.put("position", p.positionKey());
                pass.put("watermark", p.watermark());
                pass.put("exhausted", p.exhausted());
                pass.put("rows", p.passRows());
                pass.put("batches", p.batches());
                pass.put("startedAtMs", p.startedAtMs());
                long elapsedMs = Math.max(1, p.updatedAtMs() - p.startedAtMs());
                double rate = p.passRows() * 1000.0 / elapsedMs;
                pass.put("rowsPerSecond", Math.round(rate * 10) / 10.0);
                if (def.isPresent() && c.state() != CheckpointState.ACTIVATED && !p.exhausted()) {
                    List<String> sources = def.get().sourceTables();
                    long total = p.mode() == BackfillPass.Mode.FULL
                            ? storage.countSourceRows(c.partition(), sources)
                            : storage.countChanges(c.partition(), sources, p.fromSeq(), p.watermark());
                    long left = Math.max(0, total - p.passRows());
                    pass.put("rowsTotal", total);
                    if (rate > 0) pass.put("etaSeconds", (long) Math.ceil(left / rate));
                }
                pass.put("ageMs", now - p.updatedAtMs());
                m.put("pass", pass);
            }
            out.add(m);
        }
        return out;
    }
}

package syncular.jakarta.sync;

import java.util.List;
import java.util.Map;
import syncular.jakarta.schema.CompiledSchema;
import syncular.jakarta.wire.PushCommit;

/** Tests' one-commit push through the processor's group commit; a failure is thrown, as a request would see it. */
final class Pushes {
    private Pushes() { }

    static PushProcessor.Outcome one(PushProcessor processor, PushProcessor.RequestScope scope, CompiledSchema schema,
                                     Map<String, List<String>> allowed, PushCommit commit) {
        PushProcessor.Pushed pushed = processor.push(new PushProcessor.Batch(scope, schema, allowed, List.of(commit),
                underLock -> { }));
        if (pushed.failure() != null) throw pushed.failure();
        return pushed.outcomes().get(0);
    }
}

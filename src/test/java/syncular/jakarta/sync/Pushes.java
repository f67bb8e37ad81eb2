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
        return outcome(processor.push(batch(scope, schema, allowed, commit)));
    }

    /** A request's batch of the one {@code commit}, with no check under the lock. */
    static PushProcessor.Batch batch(PushProcessor.RequestScope scope, CompiledSchema schema,
                                     Map<String, List<String>> allowed, PushCommit commit) {
        return new PushProcessor.Batch(scope, schema, allowed, List.of(commit), underLock -> { });
    }

    /** The outcome of a one-commit push; its failure thrown. */
    static PushProcessor.Outcome outcome(PushProcessor.Pushed pushed) {
        if (pushed.failure() != null) throw pushed.failure();
        return pushed.outcomes().get(0);
    }
}

package syncular.jakarta.it;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Keeps every IT class in its own failsafe execution even when {@code -Dit.test=…} names it, which overrides the
 * executions' includes and excludes: a {@code *MicroIT} (its own Payara Micro processes) runs only in
 * {@code it-micro}, and an Arquillian IT never there (that execution has no container adapter on its classpath).
 */
final class ItExecution implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (context.getTestClass().isEmpty()) return ConditionEvaluationResult.enabled("no test class");
        boolean microTest = context.getTestClass().get().getSimpleName().endsWith("MicroIT");
        boolean microRun = "micro".equals(It.server());
        if (microTest == microRun) return ConditionEvaluationResult.enabled("belongs to the " + It.server() + " run");
        return ConditionEvaluationResult.disabled(microTest ? "a Payara Micro multi-process IT: the it-micro run only"
                : "an Arquillian IT: not in the it-micro run");
    }
}

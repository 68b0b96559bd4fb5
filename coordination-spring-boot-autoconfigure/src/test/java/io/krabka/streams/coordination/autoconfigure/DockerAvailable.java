package io.krabka.streams.coordination.autoconfigure;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Runs a Testcontainers test only where a Docker engine answers, and otherwise skips it
 * with a reason printed to the build output: such a test can never pass without Docker,
 * and a silent skip would look like coverage.
 */
final class DockerAvailable implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (DockerClientFactory.instance().isDockerAvailable()) {
            return ConditionEvaluationResult.enabled("a Docker engine is available");
        }
        String reason = "no Docker engine is available on this machine, so the Testcontainers path of "
                + context.getDisplayName()
                + " cannot run; the embedded-broker tests (CoordinationStarterIT) cover the same behaviour";
        System.out.println("SKIPPED: " + reason);
        return ConditionEvaluationResult.disabled(reason);
    }
}

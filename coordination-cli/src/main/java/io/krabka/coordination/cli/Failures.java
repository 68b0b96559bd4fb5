package io.krabka.coordination.cli;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import java.time.Duration;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;

/** Turns what the Kafka clients and the core throw into one line an operator can act on. */
final class Failures {

    private Failures() {}

    /**
     * The message for a failure of {@code operation} against the cluster at
     * {@code bootstrap}, with exit code {@value CoordinationCli#EXIT_FAILED}.
     */
    static CliException of(String operation, Throwable failure, String bootstrap, Duration timeout) {
        if (failure instanceof CliException cli) {
            return cli;
        }
        if (find(failure, InterruptedException.class) != null
                || find(failure, org.apache.kafka.common.errors.InterruptException.class) != null) {
            Thread.currentThread().interrupt();
            return new CliException(CoordinationCli.EXIT_FAILED, operation + " was interrupted", failure);
        }
        Throwable unauthenticated =
                find(failure, AuthenticationException.class, CoordinationAuthenticationException.class);
        if (unauthenticated != null) {
            return new CliException(
                    CoordinationCli.EXIT_FAILED,
                    "the Kafka cluster at " + bootstrap + " did not authenticate"
                            + " this tool while " + operation + ": " + unauthenticated.getMessage()
                            + " (check the SASL and TLS settings of --command-config)",
                    failure);
        }
        Throwable denied = find(failure, AuthorizationException.class, CoordinationAuthorizationException.class);
        if (denied != null) {
            String reason = String.valueOf(denied.getMessage());
            // Some of Kafka's texts end with a full stop of their own ("Topic authorization failed.").
            return new CliException(
                    CoordinationCli.EXIT_FAILED,
                    "the Kafka cluster at " + bootstrap + " refused " + operation
                            + " (ACLs): " + (reason.endsWith(".") ? reason.substring(0, reason.length() - 1) : reason)
                            + ". The tool needs Read and DescribeConfigs on the coordination topic, and Describe on the roles'"
                            + " transactional ids",
                    failure);
        }
        Throwable timedOut = find(
                failure,
                TimeoutException.class,
                java.util.concurrent.TimeoutException.class,
                CoordinationTimeoutException.class);
        if (timedOut != null) {
            return new CliException(
                    CoordinationCli.EXIT_FAILED,
                    "no answer from the Kafka cluster at " + bootstrap + " within "
                            + text(timeout) + " while " + operation + " (" + reason(timedOut)
                            + "). Is a broker reachable at that"
                            + " address from here, and do the security settings of --command-config match its listener?"
                            + " --timeout sets the wait",
                    failure);
        }
        if (failure instanceof CoordinationException coordination) {
            return new CliException(CoordinationCli.EXIT_FAILED, coordination.getMessage(), failure);
        }
        return new CliException(CoordinationCli.EXIT_FAILED, operation + " failed: " + reason(root(failure)), failure);
    }

    /** A duration as the tool's flags write it: {@code 30s}, {@code 1500ms}. */
    static String text(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }

    private static String reason(Throwable failure) {
        return failure.getMessage() == null
                ? failure.getClass().getSimpleName()
                : failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }

    @SafeVarargs
    static Throwable find(Throwable failure, Class<? extends Throwable>... types) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            for (Class<? extends Throwable> type : types) {
                if (type.isInstance(t)) {
                    return t;
                }
            }
        }
        return null;
    }

    /** The innermost cause: "Failed to create new KafkaAdminClient" says less than the ConfigException under it. */
    private static Throwable root(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }
}

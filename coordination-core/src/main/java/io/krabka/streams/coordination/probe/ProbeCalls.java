package io.krabka.streams.coordination.probe;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.jspecify.annotations.Nullable;

/** Waiting for the cluster's answers, and telling them apart, for the probe's checks. */
final class ProbeCalls {

    private ProbeCalls() {}

    /**
     * The answer, or Kafka's exception for the error the cluster answered (unwrapped from
     * the future's), or a {@link TimeoutException} when none came within {@code timeout}.
     */
    static <T> T await(Future<T> answer, Duration timeout) {
        try {
            return answer.get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : new KafkaException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("no answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        }
    }

    /** Whether {@code failure} or a cause of it is an {@code type}. */
    static boolean is(Throwable failure, Class<? extends Throwable> type) {
        return find(failure, type) != null;
    }

    static <T extends Throwable> @Nullable T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /** Whether the cluster refused the call by its ACLs. */
    static boolean denied(Throwable failure) {
        return is(failure, AuthorizationException.class);
    }

    /** Whether the cluster does not know the API (an old broker, a gateway, another engine). */
    static boolean unsupported(Throwable failure) {
        return is(failure, UnsupportedVersionException.class)
                || String.valueOf(failure.getMessage()).contains("The version of API is not supported");
    }

    /** {@code Type: message} of the failure, or of its cause where the failure only wraps one. */
    static String describe(Throwable failure) {
        Throwable shown = failure;
        while ((shown instanceof ExecutionException || shown.getClass() == KafkaException.class)
                && shown.getCause() != null
                && shown.getMessage() != null
                && shown.getMessage().startsWith(shown.getCause().getClass().getName())) {
            shown = shown.getCause();
        }
        return shown.getClass().getSimpleName() + (shown.getMessage() == null ? "" : ": " + shown.getMessage());
    }
}

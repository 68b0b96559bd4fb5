package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.RetriableCoordinationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.InvalidTxnTimeoutException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.protocol.Errors;
import org.jspecify.annotations.Nullable;

/** The one place where Kafka's exceptions become the module's. */
final class KafkaErrors {

    private KafkaErrors() {}

    /**
     * Translates a failure of {@code operation}. Fenced errors anywhere in the cause
     * chain win over everything else: they are the one signal that must not be lost.
     */
    static CoordinationException translate(String operation, Throwable error) {
        if (error instanceof CoordinationException coordination) {
            return coordination;
        }
        // InvalidTxnStateException: under transaction version 2 a commit that arrives while
        // the coordinator aborts the transaction on its own (another producer's
        // InitProducerId, or the transaction timeout) passes the broker's epoch check as a
        // "retry" and fails the state check instead; the abort already bumped the epoch.
        // Brokers with KAFKA-20785, and every broker under version 1, answer PRODUCER_FENCED.
        Throwable fenced = find(
                error,
                ProducerFencedException.class,
                InvalidProducerEpochException.class,
                InvalidPidMappingException.class,
                InvalidTxnStateException.class);
        if (fenced != null) {
            return new FencedException(
                    operation + " was fenced: a newer epoch exists for the role ("
                            + fenced.getClass().getSimpleName() + ": " + fenced.getMessage() + ")",
                    fenced);
        }
        // kafka-clients 4.1.2 reports INVALID_TRANSACTION_TIMEOUT from InitProducerId as a
        // plain KafkaException ("Unexpected error in InitProducerIdResponse; <the error's
        // message>"), not as InvalidTxnTimeoutException: recognise both (measured in
        // TransactionTimeoutIT).
        Throwable tooLong = find(error, InvalidTxnTimeoutException.class);
        if (tooLong == null && String.valueOf(unwrap(error).getMessage()).contains(TXN_TIMEOUT_TOO_LONG)) {
            tooLong = unwrap(error);
        }
        if (tooLong != null) {
            return new CoordinationConfigurationException(
                    operation + " was refused: the role producer's transaction.timeout.ms,"
                            + " which is the lease duration, is longer than the broker's transaction.max.timeout.ms (15 min by default)."
                            + " Lower krabka.coordination.lease.duration (LeaseConfig.duration) or raise transaction.max.timeout.ms on"
                            + " every broker",
                    tooLong);
        }
        Throwable interrupted = find(error, InterruptException.class, InterruptedException.class);
        if (interrupted != null) {
            Thread.currentThread().interrupt();
            return new CoordinationException(operation + " was interrupted", interrupted);
        }
        Throwable unauthenticated = find(error, AuthenticationException.class);
        if (unauthenticated != null) {
            return new CoordinationAuthenticationException(
                    operation + " was refused: the cluster did not authenticate"
                            + " this member (check the SASL credentials and the TLS trust settings): "
                            + unauthenticated.getMessage(),
                    unauthenticated);
        }
        Throwable denied = find(error, AuthorizationException.class);
        if (denied != null) {
            return new CoordinationAuthorizationException(
                    operation + " was refused by the cluster's ACLs: " + denied.getMessage(), denied);
        }
        Throwable timeout = find(error, TimeoutException.class, java.util.concurrent.TimeoutException.class);
        if (timeout != null) {
            return new CoordinationTimeoutException(
                    operation + " got no answer from the cluster in time: " + reason(timeout), timeout);
        }
        Throwable transientError = find(error, RetriableException.class, TransactionAbortedException.class);
        if (transientError != null) {
            return new RetriableCoordinationException(
                    operation + " failed transiently: " + transientError, transientError);
        }
        Throwable root = unwrap(error);
        return new CoordinationException(operation + " failed: " + root, root);
    }

    /** The text of Kafka's INVALID_TRANSACTION_TIMEOUT error. */
    private static final String TXN_TIMEOUT_TOO_LONG = Errors.INVALID_TRANSACTION_TIMEOUT.message();

    /** A failure's message, or its type where it has none (a bare TimeoutException, say). */
    private static String reason(Throwable failure) {
        return failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
    }

    @SafeVarargs
    private static @Nullable Throwable find(Throwable error, Class<? extends Throwable>... types) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            for (Class<? extends Throwable> type : types) {
                if (type.isInstance(t)) {
                    return t;
                }
            }
        }
        return null;
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}

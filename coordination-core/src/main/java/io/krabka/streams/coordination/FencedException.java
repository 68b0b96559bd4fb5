package io.krabka.streams.coordination;

/**
 * The only signal that a leadership ended: a newer epoch exists for the role, so the
 * cluster already rejects every write this member makes with the old one. Stop the
 * role's work at once and do not retry with the same {@link Leadership}; to contend
 * again, acquire anew.
 *
 * <p>Every fenced error Kafka raises ({@code ProducerFencedException},
 * {@code InvalidProducerEpochException}, {@code InvalidPidMappingException} when the
 * coordinator forgot the producer, and {@code InvalidTxnStateException}, which a
 * transaction-version-2 broker before KAFKA-20785 returns to a commit that raced the
 * coordinator's own abort) maps to this exception, and nothing else does.
 */
public class FencedException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public FencedException(String message) {
        super(message);
    }

    public FencedException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.krabka.streams.coordination;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The only signal that a leadership ended. {@link #endCause()} says how: most often
 * {@link LeadershipEndCause#FENCED} (a newer epoch exists for the role, so the cluster
 * already rejects every write this member makes with the old one), or the leadership
 * expired, failed or was released before this write or renewal. Stop the role's work at
 * once and do not retry with the same leadership; to contend again, acquire anew.
 *
 * <p><b>What a caller can conclude about its records:</b> nothing of the write or send
 * that threw this was written, and nothing of it will be: its transaction was refused or
 * aborted, or never started. Retrying it under a newer leadership does not duplicate it.
 * A commit whose outcome the library could not learn is never reported this way, but as
 * {@link CommitOutcomeUnknownException}.
 *
 * <p>A planned end (a release, a handover, a drain) is a {@link LeadershipReleasedException},
 * this class's one subclass: catch it first to tell a planned move from a fence by type.
 *
 * <p>Every fenced error Kafka raises ({@code ProducerFencedException},
 * {@code InvalidProducerEpochException}, {@code InvalidPidMappingException} when the
 * coordinator forgot the producer, and {@code InvalidTxnStateException}, which a
 * transaction-version-2 broker before KAFKA-20785 returns to a commit that raced the
 * coordinator's own abort) maps to this exception with cause {@code FENCED}, as long as
 * it answers a transaction whose commit had not timed out before. A cluster that does
 * not answer in time is not an end: that is a {@link CoordinationTimeoutException}, and
 * the leadership may still be alive.
 */
public class FencedException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    private final LeadershipEndCause endCause;

    public FencedException(String message) {
        this(message, null, LeadershipEndCause.FENCED);
    }

    public FencedException(String message, @Nullable Throwable cause) {
        this(message, cause, LeadershipEndCause.FENCED);
    }

    public FencedException(String message, @Nullable Throwable cause, LeadershipEndCause endCause) {
        super(message, cause);
        this.endCause = Objects.requireNonNull(endCause, "endCause");
    }

    /**
     * The exception for a leadership that ended with {@code endCause}: a
     * {@link LeadershipReleasedException} for a planned end ({@code RELEASED}), so a worker
     * tells it from a fence by its type, and a {@code FencedException} otherwise.
     */
    public static FencedException ended(String message, @Nullable Throwable cause, LeadershipEndCause endCause) {
        return endCause == LeadershipEndCause.RELEASED
                ? new LeadershipReleasedException(message, cause)
                : new FencedException(message, cause, endCause);
    }

    /** How the leadership ended. */
    public LeadershipEndCause endCause() {
        return endCause;
    }
}

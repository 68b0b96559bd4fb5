package io.krabka.streams.coordination;

/**
 * What the transaction coordinator reports for a role's {@code transactional.id}.
 *
 * @param producerId the current producer id
 * @param producerEpoch the current producer epoch
 * @param state the transaction state as Kafka names it (Empty, Ongoing,
 *     PrepareCommit, CompleteCommit, PrepareAbort, CompleteAbort, ...)
 * @param transactionStartedAt when the newest transaction began, in epoch milliseconds on
 *     the coordinator's clock, or -1 when none did since the last InitProducerId (or it is
 *     not known). Each transaction sets it anew, so it moves with every transaction even
 *     where the epoch does not (transaction version 1).
 */
public record ProducerState(long producerId, short producerEpoch, String state, long transactionStartedAt) {

    /** A state whose newest transaction's start is not known. */
    public ProducerState(long producerId, short producerEpoch, String state) {
        this(producerId, producerEpoch, state, -1L);
    }

    /**
     * Whether no transaction is open or being completed: its markers are written, so
     * {@code read_committed} readers see its outcome and an InitProducerId is not refused
     * as concurrent.
     */
    public boolean transactionComplete() {
        return switch (state) {
            case "Empty", "CompleteCommit", "CompleteAbort", "Dead" -> true;
            default -> false;
        };
    }
}

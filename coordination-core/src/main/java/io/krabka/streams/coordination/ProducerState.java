package io.krabka.streams.coordination;

/**
 * What the transaction coordinator reports for a role's {@code transactional.id}.
 *
 * @param producerId the current producer id
 * @param producerEpoch the current producer epoch
 * @param state the transaction state as Kafka names it (Empty, Ongoing,
 *     PrepareCommit, CompleteCommit, PrepareAbort, CompleteAbort, ...)
 */
public record ProducerState(long producerId, short producerEpoch, String state) {

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

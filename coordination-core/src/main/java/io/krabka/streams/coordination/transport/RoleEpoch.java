package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * One epoch of a role: the role's transactional producer after it called
 * InitProducerId. Every transaction it runs is fenced by the broker once another
 * member runs InitProducerId for the role.
 */
public interface RoleEpoch extends AutoCloseable {

    /** The role whose {@code transactional.id} this producer carries. */
    Role role();

    /**
     * Runs one transaction with these records, in order, and commits it. On a failure
     * before the commit was sent the transaction is aborted (when the producer still
     * can) before the exception is thrown, so nothing of it becomes visible. A commit
     * that gets no answer in time is not retried: see
     * {@link #transact(List, ConsumedOffsets, Duration)}.
     *
     * @return the metadata of each record, in order
     * @throws io.krabka.streams.coordination.FencedException when a newer epoch exists;
     *     nothing of the transaction was written
     * @throws io.krabka.streams.coordination.RetriableCoordinationException when the
     *     transaction failed for a transient reason, was aborted, and may be retried
     * @throws io.krabka.streams.coordination.CoordinationTimeoutException when the
     *     cluster did not answer in time before the commit was sent; nothing was written
     * @throws io.krabka.streams.coordination.CommitOutcomeUnknownException when the
     *     commit was sent and its outcome is not known
     */
    default List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records) {
        return transact(records, ConsumedOffsets.NONE);
    }

    /**
     * Runs one transaction with these records, in order, and the input offsets
     * {@code consumed}, and commits it: the records and the offsets become visible
     * together or not at all. Failures as for {@link #transact(List)}.
     */
    List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed);

    /**
     * As {@link #transact(List, ConsumedOffsets)}, but a commit that got no answer in
     * time is sent again for up to {@code commitRetry} (a Kafka producer returns the
     * pending commit's result; an abort is refused then). Once a commit was sent and
     * not answered, every failure leaves its outcome open: the transaction may have
     * committed, or may still commit, even when a retry is fenced. So nothing but a
     * {@link io.krabka.streams.coordination.CommitOutcomeUnknownException} is thrown from
     * then on, and the epoch is no longer {@link #usable()}; the caller finds out what
     * happened from the coordinator and the log. The default ignores
     * {@code commitRetry}.
     *
     * @param commitRetry how long a commit that timed out may be retried: the lease left
     * @throws io.krabka.streams.coordination.CommitOutcomeUnknownException when the
     *     commit was sent and its outcome is not known after {@code commitRetry}, or the
     *     epoch was closed while the commit was pending
     */
    default List<RecordMetadata> transact(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, Duration commitRetry) {
        return transact(records, consumed);
    }

    /**
     * A number that changes whenever the producer may have learned new cluster
     * features (it opened a connection and so received a new ApiVersions response). A
     * producer decides its transaction version from those features, so the holder
     * stops predicting epochs when this moves.
     */
    long featureGeneration();

    /**
     * Whether the producer can still run transactions. A producer that could not even
     * abort a failed transaction is in a fatal state; its epoch is useless from then on.
     */
    boolean usable();

    /** Closes the producer without writing anything; the epoch stays until a challenger bumps it. */
    @Override
    void close();
}

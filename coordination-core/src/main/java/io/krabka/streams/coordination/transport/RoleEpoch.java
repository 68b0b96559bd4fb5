package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.Role;
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
     * Runs one transaction with these records, in order, and commits it. On any
     * failure the transaction is aborted (when the producer still can) before the
     * exception is thrown, so nothing of it becomes visible.
     *
     * @return the metadata of each record, in order
     * @throws io.krabka.streams.coordination.FencedException when a newer epoch exists
     * @throws io.krabka.streams.coordination.RetriableCoordinationException when the
     *     transaction failed for a transient reason and may be retried
     * @throws io.krabka.streams.coordination.CoordinationTimeoutException when the
     *     cluster did not answer in time
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

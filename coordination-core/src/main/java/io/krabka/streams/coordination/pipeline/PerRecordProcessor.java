package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.client.Leadership;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A {@link BatchProcessor} that says which input record each output is for. When the
 * cluster refuses an output, the pipeline then finds the record it came from without
 * processing any input again: it writes the outputs already made in smaller transactions.
 */
@FunctionalInterface
public interface PerRecordProcessor extends BatchProcessor {

    /**
     * Turns a batch of input records into output records, per input record.
     *
     * @return one list per record of {@code batch}, in its order: that record's outputs (may be empty)
     * @throws Exception as {@link BatchProcessor#process}
     */
    List<List<ProducerRecord<byte[], byte[]>>> processEach(
            List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership) throws Exception;

    /** Every record's outputs, in order. */
    @Override
    default List<ProducerRecord<byte[], byte[]>> process(
            List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership) throws Exception {
        List<ProducerRecord<byte[], byte[]>> outputs = new ArrayList<>();
        processEach(batch, leadership).forEach(outputs::addAll);
        return outputs;
    }
}

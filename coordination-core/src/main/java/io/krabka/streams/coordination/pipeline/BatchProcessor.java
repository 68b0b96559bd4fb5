package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.client.Leadership;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * What a {@link LeaderPipeline} does with one batch of input records: the records to
 * write for them. They are committed with the batch's input offsets in one guarded
 * transaction, so they become visible exactly once, or not at all when the leadership
 * was deposed meanwhile (then the next holder processes the same batch again).
 *
 * <p>The same batch may be processed more than once (after a failover, or a write
 * that failed and is retried from the committed offsets); only its outputs in Kafka are
 * exactly once. Keep the processing a function of its input, and do side effects
 * outside Kafka downstream, from the committed output.
 */
@FunctionalInterface
public interface BatchProcessor {

    /**
     * Turns a batch of input records into output records.
     *
     * @param batch the input records, in offset order per partition; never empty
     * @param leadership the leadership the outputs are written under (its member and term
     *     can stamp them)
     * @return the records to write; may be empty
     * @throws Exception to abort the batch: nothing of it is written, and the pipeline ends
     *     with this failure
     */
    List<ProducerRecord<byte[], byte[]>> process(List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership)
            throws Exception;
}

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
 *
 * <p>When the cluster refuses an output for what it is (too large for its topic, invalid,
 * for a topic or partition that does not exist), the pipeline finds the input record it
 * came from by writing the batch in halves, processing each half again, down to the one
 * record, which goes to its dead-letter topic ({@link PipelineSettings#deadLetters()}). A
 * {@link PerRecordProcessor} says which input each output is for, so nothing is processed
 * twice for that.
 *
 * <p>When the leadership ends, the pipeline's thread is interrupted: a processor that
 * takes long stops on the interrupt (throwing {@link InterruptedException}, or anything
 * once {@link Leadership#isActive()} is false); the batch is then dropped, not written.
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
     * @throws InterruptedException when interrupted: the batch is dropped and the run returns
     * @throws Exception to abort the batch: nothing of it is written, and the pipeline ends
     *     with this failure (unless the leadership ended meanwhile: then the run returns)
     */
    List<ProducerRecord<byte[], byte[]>> process(List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership)
            throws Exception;
}

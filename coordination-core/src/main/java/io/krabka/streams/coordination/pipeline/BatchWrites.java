package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.client.Leadership;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Processes one batch and writes its outputs with its input offsets in one guarded
 * transaction. An output the cluster refuses for what it is (too large for its topic,
 * invalid, for a topic or partition that does not exist) is isolated: the batch is written
 * in halves, and halves of the refused half, down to the one input record whose outputs
 * are refused, which goes to its dead-letter topic in their place. Every other record's
 * outputs are written as they were made. A dead letter is logged once it is committed,
 * never before.
 */
final class BatchWrites {

    // The pipeline's logger: operators filter its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(LeaderPipeline.class);

    private final PipelineSettings settings;
    private final BatchProcessor processor;
    private final OutputTopics topics;
    private final AtomicLong processedRecords;
    private final AtomicLong committedBatches;

    BatchWrites(
            PipelineSettings settings,
            BatchProcessor processor,
            OutputTopics topics,
            AtomicLong processedRecords,
            AtomicLong committedBatches) {
        this.settings = settings;
        this.processor = processor;
        this.topics = topics;
        this.processedRecords = processedRecords;
        this.committedBatches = committedBatches;
    }

    /**
     * Processes and writes {@code batch}.
     *
     * @return false when it stopped because the thread was interrupted or the leadership
     *     ended (the interrupt is kept); what was not written by then is not written
     * @throws FencedException when a write found the leadership over
     * @throws CoordinationConfigurationException when a refused record cannot be dead-lettered
     * @throws CoordinationException when a write failed otherwise: the parts written before
     *     stay written, and the caller resumes from the committed offsets
     * @throws Exception what the processor threw while the leadership lasted
     */
    boolean write(List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership, Consumer<byte[], byte[]> consumer)
            throws Exception {
        Processed whole = process(batch, leadership);
        if (whole == null) {
            return false;
        }
        Deque<int[]> parts = new ArrayDeque<>();
        parts.push(new int[] {0, batch.size()});
        boolean first = true;
        while (!parts.isEmpty()) {
            // A batch being written in parts stops between them when the work is to stop.
            if (!first && stopping(leadership)) {
                return false;
            }
            first = false;
            int[] part = parts.pop();
            List<ConsumerRecord<byte[], byte[]>> inputs = batch.subList(part[0], part[1]);
            List<ProducerRecord<byte[], byte[]>> outputs = whole.outputs(part[0], part[1], batch.size());
            if (outputs == null) {
                // Outputs the processor did not attribute: process this part again on its own.
                Processed again = process(inputs, leadership);
                if (again == null) {
                    return false;
                }
                // All of a processing's records: known whether or not it attributed them.
                outputs = Objects.requireNonNull(again.outputs(0, inputs.size(), inputs.size()));
            }
            Exception refused = topics.refusal(outputs, consumer);
            if (refused == null) {
                refused = commit(inputs, outputs, leadership, consumer);
                if (refused == null) {
                    continue;
                }
            }
            if (inputs.size() > 1) {
                log.info(
                        "The cluster refuses an output of {} input records from {} of pipeline group {} ({}); writing them in"
                                + " halves to find the record",
                        inputs.size(),
                        where(inputs.get(0)),
                        settings.groupId(),
                        DeadLetters.reason(refused));
                int middle = (part[0] + part[1]) >>> 1;
                parts.push(new int[] {middle, part[1]});
                parts.push(new int[] {part[0], middle});
            } else {
                deadLetter(inputs.get(0), refused, leadership, consumer);
            }
        }
        return true;
    }

    /**
     * Writes {@code outputs} with the offsets after {@code inputs}.
     *
     * @return null when they committed; what the cluster refused them for when it refused
     *     an output for what it is
     */
    private @Nullable Exception commit(
            List<ConsumerRecord<byte[], byte[]>> inputs,
            List<ProducerRecord<byte[], byte[]>> outputs,
            Leadership leadership,
            Consumer<byte[], byte[]> consumer) {
        try {
            // An assigned consumer's group metadata has no generation and no member: the
            // pipeline commits offsets in its group without joining it.
            leadership.write(
                    outputs, new ConsumedOffsets(consumer.groupMetadata(), PipelineOffsets.nextOffsets(inputs)));
        } catch (FencedException | CoordinationAuthorizationException ended) {
            throw ended;
        } catch (CoordinationException failed) {
            Exception refused = refusedRecord(failed);
            if (refused == null) {
                throw failed;
            }
            return refused;
        }
        processedRecords.addAndGet(inputs.size());
        committedBatches.incrementAndGet();
        for (ProducerRecord<byte[], byte[]> output : outputs) {
            if (DeadLetters.isDeadLetter(output)) {
                log.warn(
                        "{} wrote input record {} to {} under term {}",
                        leadership.member(),
                        DeadLetters.describe(output),
                        output.topic(),
                        leadership.term());
            }
        }
        return null;
    }

    /** Writes the dead letter of {@code input} with the offset after it, or fails when that cannot be. */
    private void deadLetter(
            ConsumerRecord<byte[], byte[]> input,
            Exception refused,
            Leadership leadership,
            Consumer<byte[], byte[]> consumer) {
        if (!settings.deadLetters()) {
            throw new CoordinationConfigurationException(
                    "the cluster refuses the outputs of input record " + where(input)
                            + " of pipeline group " + settings.groupId() + " (" + DeadLetters.reason(refused)
                            + "), and the pipeline has no"
                            + " dead-letter topics (PipelineSettings.withDeadLetters): it cannot go past that record",
                    refused);
        }
        ProducerRecord<byte[], byte[]> dead = DeadLetters.of(input, settings.groupId(), refused);
        Exception again = topics.refusal(List.of(dead), consumer);
        if (again == null) {
            again = commit(List.of(input), List.of(dead), leadership, consumer);
        }
        if (again != null) {
            throw new CoordinationConfigurationException(
                    "input record " + where(input) + " of pipeline group "
                            + settings.groupId() + " cannot be dead-lettered to " + dead.topic() + " ("
                            + DeadLetters.reason(again)
                            + "); its outputs were refused (" + DeadLetters.reason(refused) + ")",
                    again);
        }
    }

    /** The processor's outputs, or null when the thread was interrupted or the leadership ended while it ran. */
    private @Nullable Processed process(List<ConsumerRecord<byte[], byte[]>> inputs, Leadership leadership)
            throws Exception {
        Processed processed;
        try {
            if (processor instanceof PerRecordProcessor each) {
                List<List<ProducerRecord<byte[], byte[]>>> perRecord = each.processEach(inputs, leadership);
                if (perRecord.size() != inputs.size()) {
                    throw new IllegalStateException("a PerRecordProcessor returned " + perRecord.size()
                            + " lists of outputs for " + inputs.size() + " input records");
                }
                processed = new Processed(perRecord, null);
            } else {
                processed = new Processed(null, processor.process(inputs, leadership));
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception failed) {
            if (stopping(leadership)) {
                // It failed because its leadership ended (a fenced guarded write, an interrupted call).
                return null;
            }
            throw failed;
        }
        // Stopping: the batch is dropped, so no output is written after the interrupt that ends the work.
        return Thread.currentThread().isInterrupted() ? null : processed;
    }

    private static boolean stopping(Leadership leadership) {
        return Thread.currentThread().isInterrupted() || !leadership.isActive();
    }

    /**
     * The cluster's refusal of one output for what it is, found in a write's failure: never
     * a transient failure, a fence or a refused ACL. Null when there is none.
     */
    static @Nullable Exception refusedRecord(CoordinationException failed) {
        for (Throwable cause = failed.getCause();
                cause != null;
                cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof RecordTooLargeException
                    || cause instanceof RecordBatchTooLargeException
                    || cause instanceof InvalidRecordException
                    || cause instanceof InvalidTopicException
                    || cause instanceof InvalidTimestampException) {
                return (Exception) cause;
            }
        }
        return null;
    }

    private static String where(ConsumerRecord<byte[], byte[]> record) {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }

    /** A processor's outputs: per input record, or for the processed records as a whole. */
    private record Processed(
            @Nullable List<List<ProducerRecord<byte[], byte[]>>> perRecord,
            @Nullable List<ProducerRecord<byte[], byte[]>> all) {

        /** The outputs of records {@code from} to {@code to}; null when they are not known apart from the others'. */
        @Nullable
        List<ProducerRecord<byte[], byte[]>> outputs(int from, int to, int size) {
            if (perRecord == null) {
                return from == 0 && to == size ? all : null;
            }
            List<ProducerRecord<byte[], byte[]>> outputs = new ArrayList<>();
            perRecord.subList(from, to).forEach(outputs::addAll);
            return outputs;
        }
    }
}

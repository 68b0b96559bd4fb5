package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.LongConsumer;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Cuts one run's input into batches of at most the batch size, each closed at most the
 * batch wait after its first record arrived. Records polled beyond a batch wait for the
 * next; every poll reports how many input records wait behind the batches.
 */
final class BatchReader {

    /** How long one poll waits when no batch is open: bounds how late a deposed holder notices. */
    private static final Duration IDLE_POLL = Duration.ofMillis(200);
    /** A poll that returns within this found its records already waiting. */
    private static final Duration AT_ONCE = Duration.ofMillis(2);

    private final Consumer<byte[], byte[]> consumer;
    private final PipelineSettings settings;
    /** Its ticker paces batches. */
    private final CoordinationRuntime runtime;
    // Told the records waiting behind the last batch, as of each fetch.
    private final LongConsumer lag;
    private final Deque<ConsumerRecord<byte[], byte[]>> buffer = new ArrayDeque<>();

    BatchReader(
            Consumer<byte[], byte[]> consumer,
            PipelineSettings settings,
            CoordinationRuntime runtime,
            LongConsumer lag) {
        this.consumer = consumer;
        this.settings = settings;
        this.runtime = runtime;
        this.lag = lag;
    }

    /**
     * The next batch: waits up to {@link #IDLE_POLL} for a first record, then up to the
     * batch wait for more, and takes at most the batch size; the rest waits for the next.
     */
    List<ConsumerRecord<byte[], byte[]>> next(long lastWriteStarted) {
        // When was the batch's first record there? Records left over, or returned at once
        // by the first poll after a write, arrived during that write: count their wait from
        // its start, not from now, or they would wait a write and a whole batch wait more.
        long opened = lastWriteStarted;
        if (buffer.isEmpty()) {
            long polling = runtime.nanoTime();
            poll(IDLE_POLL);
            if (buffer.isEmpty()) {
                return List.of();
            }
            if (runtime.nanoTime() - polling > AT_ONCE.toNanos()) {
                opened = polling;
            }
        }
        long deadline = opened + settings.maxBatchWait().toNanos();
        while (buffer.size() < settings.maxBatchRecords()) {
            long left = deadline - runtime.nanoTime();
            if (left <= 0) {
                break;
            }
            poll(Duration.ofNanos(left));
        }
        List<ConsumerRecord<byte[], byte[]>> batch =
                new ArrayList<>(Math.min(buffer.size(), settings.maxBatchRecords()));
        while (!buffer.isEmpty() && batch.size() < settings.maxBatchRecords()) {
            batch.add(buffer.poll());
        }
        return batch;
    }

    /** Drops the records polled but not batched: the consumer is about to be moved elsewhere. */
    void clear() {
        buffer.clear();
    }

    private void poll(Duration wait) {
        consumer.poll(wait).forEach(buffer::add);
        long behind = buffer.size();
        for (TopicPartition partition : consumer.assignment()) {
            behind += consumer.currentLag(partition).orElse(0);
        }
        lag.accept(behind);
    }
}

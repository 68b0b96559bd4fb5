package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** A read_committed consumer at the partition's end in a long poll on its own thread, as the topic watcher is. */
final class PartitionWatcher implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final AtomicReference<CompletableFuture<Long>> waiting = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean closed;

    PartitionWatcher(Map<String, Object> connection, TopicPartition partition, String threadName) {
        consumer = new KafkaConsumer<>(
                KafkaCoordinationTransport.readerSettings(connection),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        consumer.assign(Set.of(partition));
        consumer.seekToEnd(Set.of(partition));
        consumer.position(partition);
        thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** Completes with the instant the watcher's poll returns its next record. */
    CompletableFuture<Long> next() {
        CompletableFuture<Long> future = new CompletableFuture<>();
        waiting.set(future);
        return future;
    }

    private void run() {
        while (!closed) {
            try {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                if (!records.isEmpty()) {
                    long now = System.nanoTime();
                    CompletableFuture<Long> future = waiting.getAndSet(null);
                    if (future != null) {
                        future.complete(now);
                    }
                }
            } catch (org.apache.kafka.common.errors.WakeupException closing) {
                return;
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        consumer.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consumer.close();
    }
}

package io.krabka.coordination.chaos.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Follows the coordination topic while the run goes on and keeps every record it sees
 * with the time it saw it on the harness's clock. Two reasons it reads live rather than
 * once at the end: the topic is compacted during the run (a late reader no longer sees
 * the leases of past tenures), and a member whose lease clock the harness stepped stamps
 * its records with that clock (the receipt time does not move with it).
 */
final class LeaseRecorder implements AutoCloseable {

    /** One record of the coordination topic and when this recorder received it. */
    record Seen(int partition, long offset, long receivedAt, byte[] key, byte[] value) {}

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions;
    private final List<Seen> seen = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    LeaseRecorder(String bootstrapServers, String topic, int partitionCount) {
        consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                IsolationLevel.READ_COMMITTED.toString().toLowerCase(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
                20, // receipt times within tens of ms of the commit
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class));
        partitions = new ArrayList<>();
        for (int partition = 0; partition < partitionCount; partition++) {
            partitions.add(new TopicPartition(topic, partition));
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        thread = new Thread(this::follow, "chaos-lease-recorder");
        thread.setDaemon(true);
        thread.start();
    }

    private void follow() {
        try {
            while (running) {
                poll();
            }
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    private void poll() {
        var records = consumer.poll(Duration.ofMillis(100));
        long now = System.currentTimeMillis();
        synchronized (seen) {
            for (ConsumerRecord<byte[], byte[]> record : records) {
                seen.add(new Seen(record.partition(), record.offset(), now, record.key(), record.value()));
            }
        }
    }

    /**
     * Reads on until everything decided so far (the last stable offsets now) was seen, stops,
     * and returns every record in the order received (offset order per partition).
     */
    List<Seen> finish(Duration timeout) throws InterruptedException {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(10));
        if (failure != null) {
            throw new IllegalStateException("the lease recorder failed", failure);
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, timeout);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the lease recorder could not read up to " + ends);
            }
            poll();
        }
        synchronized (seen) {
            return List.copyOf(seen);
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consumer.close();
    }
}

package io.krabka.streams.coordination.test.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;

/**
 * A {@code read_committed} byte-array consumer of an {@link InMemoryCluster}, with manual
 * assignment, as a {@link io.krabka.streams.coordination.pipeline.LeaderPipeline} uses
 * one: {@link #poll} waits for records the cluster committed (woken by the write that
 * brings them, and by interrupts as a {@code KafkaConsumer} is), {@link #committed} answers
 * with the offsets transactions committed for its group, and {@link #groupMetadata} names
 * that group, so a guarded transaction stores its offsets there.
 *
 * <p>It extends Kafka's {@link MockConsumer} so every other method of {@code Consumer}
 * exists, as Kafka's mock has it; subscribing to topics (group management) is not
 * modelled. Positions start at the group's committed offset, else at the log's start
 * ({@code auto.offset.reset=earliest}). One thread at a time, as with a Kafka consumer.
 */
public final class InMemoryConsumer extends MockConsumer<byte[], byte[]> {

    /** Records per poll, as a pipeline's consumer is configured. */
    private static final int MAX_POLL_RECORDS = 500;

    private final InMemoryCluster cluster;
    private final String groupId;
    private final Map<TopicPartition, Long> positions = new HashMap<>();

    InMemoryConsumer(InMemoryCluster cluster, String groupId) {
        super("earliest");
        this.cluster = cluster;
        this.groupId = groupId;
    }

    @Override
    public void assign(Collection<TopicPartition> partitions) {
        super.assign(partitions);
        positions.keySet().retainAll(new HashSet<>(partitions));
    }

    @Override
    public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
        requireOpen();
        if (Thread.interrupted()) {
            // Kafka's InterruptException sets the thread's interrupt flag again.
            throw new InterruptException(new InterruptedException());
        }
        List<TopicPartition> assigned = new ArrayList<>(assignment());
        Map<TopicPartition, Long> from = new HashMap<>();
        assigned.forEach(partition -> from.put(partition, position(partition)));
        try {
            cluster.await(() -> assigned.stream().anyMatch(p -> cluster.visibleEndOffset(p) > from.get(p)), timeout);
        } catch (InterruptedException e) {
            throw new InterruptException(e);
        }
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> records = new LinkedHashMap<>();
        Map<TopicPartition, OffsetAndMetadata> next = new LinkedHashMap<>();
        int room = MAX_POLL_RECORDS;
        for (TopicPartition partition : assigned) {
            if (room == 0) {
                break;
            }
            InMemoryCluster.Fetch fetch = cluster.fetch(partition, from.get(partition), room);
            room -= fetch.records().size();
            positions.put(partition, fetch.next());
            next.put(partition, new OffsetAndMetadata(fetch.next()));
            if (!fetch.records().isEmpty()) {
                records.put(partition, fetch.records());
            }
        }
        return new ConsumerRecords<>(records, next);
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        requireAssigned(partition);
        positions.put(partition, offset);
    }

    @Override
    public void seek(TopicPartition partition, OffsetAndMetadata offsetAndMetadata) {
        seek(partition, offsetAndMetadata.offset());
    }

    @Override
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        partitions.forEach(partition -> seek(partition, 0));
    }

    @Override
    public void seekToEnd(Collection<TopicPartition> partitions) {
        partitions.forEach(partition -> seek(partition, cluster.visibleEndOffset(partition)));
    }

    @Override
    public long position(TopicPartition partition) {
        requireAssigned(partition);
        return positions.computeIfAbsent(partition, p -> {
            OffsetAndMetadata committed = cluster.committedOffsets(groupId).get(p);
            return committed == null ? 0 : committed.offset();
        });
    }

    @Override
    public long position(TopicPartition partition, Duration timeout) {
        return position(partition);
    }

    @Override
    public OptionalLong currentLag(TopicPartition partition) {
        return OptionalLong.of(Math.max(0, cluster.visibleEndOffset(partition) - position(partition)));
    }

    /** The offsets committed transactions stored for this consumer's group; partitions without any are left out. */
    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
        requireOpen();
        Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>(cluster.committedOffsets(groupId));
        committed.keySet().retainAll(partitions);
        return committed;
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Duration timeout) {
        return committed(partitions);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        requireOpen();
        return cluster.partitionsFor(topic);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic, Duration timeout) {
        return partitionsFor(topic);
    }

    /** The group, with no generation and no member: what an assigned Kafka consumer reports. */
    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return new ConsumerGroupMetadata(groupId);
    }

    /** Closes the consumer; closing it again does nothing, as with a Kafka consumer. */
    @Override
    public void close() {
        if (!closed()) {
            super.close();
        }
    }

    private void requireOpen() {
        if (closed()) {
            throw new IllegalStateException("This consumer has already been closed.");
        }
    }

    private void requireAssigned(TopicPartition partition) {
        requireOpen();
        if (!assignment().contains(partition)) {
            throw new IllegalStateException("No current assignment for partition " + partition);
        }
    }
}

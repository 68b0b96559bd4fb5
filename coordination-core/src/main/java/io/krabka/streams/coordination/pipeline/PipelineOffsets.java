package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a pipeline is in its input: the input's partitions, the group's committed offsets
 * a holder resumes from, the offsets a batch commits, and how far the group is behind.
 */
final class PipelineOffsets {

    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);

    private PipelineOffsets() {}

    /** Every partition of every input topic; fails naming the topics that do not exist. */
    static Set<TopicPartition> partitions(Consumer<byte[], byte[]> consumer, PipelineSettings settings) {
        Set<TopicPartition> partitions = new LinkedHashSet<>();
        List<String> missing = new ArrayList<>();
        for (String topic : settings.inputTopics()) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, METADATA_TIMEOUT);
            if (infos == null || infos.isEmpty()) {
                missing.add(topic);
                continue;
            }
            infos.forEach(info -> partitions.add(new TopicPartition(info.topic(), info.partition())));
        }
        if (!missing.isEmpty()) {
            throw new CoordinationConfigurationException("the input topic(s) " + missing + " of pipeline group "
                    + settings.groupId() + " do not exist: create them (the pipeline never auto-creates its input)");
        }
        return partitions;
    }

    /** Moves the consumer back to the committed offsets (or the start, where none are). */
    static void rewind(Consumer<byte[], byte[]> consumer, Set<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(partitions, METADATA_TIMEOUT);
        List<TopicPartition> fromStart = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata offset = committed.get(partition);
            if (offset == null) {
                fromStart.add(partition);
            } else {
                consumer.seek(partition, offset);
            }
        }
        if (!fromStart.isEmpty()) {
            consumer.seekToBeginning(fromStart);
        }
    }

    /** Per partition, the offset after the batch's last record of it: where the next holder resumes. */
    static Map<TopicPartition, OffsetAndMetadata> nextOffsets(List<ConsumerRecord<byte[], byte[]>> batch) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : batch) {
            offsets.put(
                    new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
        }
        return offsets;
    }

    /** {@link LeaderPipeline#measureLag}: per input partition, its last stable offset minus the group's committed offset. */
    static long measureLag(Admin admin, PipelineSettings settings, Duration timeout) {
        try {
            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            admin.describeTopics(settings.inputTopics())
                    .allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .forEach((topic, description) -> description
                            .partitions()
                            .forEach(partition ->
                                    ends.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest())));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> stable = admin.listOffsets(
                            ends, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(settings.groupId())
                    .partitionsToOffsetAndMetadata()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            long lag = 0;
            for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end : stable.entrySet()) {
                OffsetAndMetadata done = committed.get(end.getKey());
                // Without committed offsets the pipeline starts at the log start, which retention may have moved.
                lag += Math.max(0, end.getValue().offset() - (done == null ? 0 : done.offset()));
            }
            return lag;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException(
                    "interrupted while measuring the lag of pipeline group " + settings.groupId(), e);
        } catch (ExecutionException | TimeoutException e) {
            throw new CoordinationException(
                    "could not measure the lag of pipeline group " + settings.groupId() + ": " + e, e);
        }
    }
}

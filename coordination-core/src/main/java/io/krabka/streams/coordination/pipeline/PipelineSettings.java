package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link LeaderPipeline} reads and how it batches.
 *
 * @param inputTopics the topics to read, every partition of each, {@code read_committed}
 * @param groupId the consumer group the input offsets are committed in (only offsets: the
 *     pipeline never joins the group); by default {@code <role>-pipeline}
 * @param maxBatchRecords at most this many input records per transaction
 * @param maxBatchWait a transaction commits at most this long after its first input record
 *     arrived, full or not
 */
public record PipelineSettings(List<String> inputTopics, String groupId, int maxBatchRecords, Duration maxBatchWait) {

    /** Records per transaction unless set: Kafka's own {@code max.poll.records}. */
    public static final int DEFAULT_MAX_BATCH_RECORDS = 500;
    /** How long a batch may wait for more records unless set. */
    public static final Duration DEFAULT_MAX_BATCH_WAIT = Duration.ofMillis(20);

    public PipelineSettings {
        inputTopics = List.copyOf(Objects.requireNonNull(inputTopics, "inputTopics"));
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(maxBatchWait, "maxBatchWait");
        if (inputTopics.isEmpty() || inputTopics.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("a pipeline needs at least one input topic, and no blank name: " + inputTopics);
        }
        if (groupId.isBlank()) {
            throw new IllegalArgumentException("the pipeline's group id must not be blank");
        }
        if (maxBatchRecords < 1) {
            throw new IllegalArgumentException("maxBatchRecords must be at least 1, not " + maxBatchRecords);
        }
        if (maxBatchWait.isNegative()) {
            throw new IllegalArgumentException("maxBatchWait must not be negative, not " + maxBatchWait);
        }
    }

    /** Reads {@code inputTopics} for {@code role}, with the default group id and batching. */
    public static PipelineSettings of(Role role, String... inputTopics) {
        return new PipelineSettings(List.of(inputTopics), defaultGroupId(role), DEFAULT_MAX_BATCH_RECORDS, DEFAULT_MAX_BATCH_WAIT);
    }

    /** The group id a pipeline of {@code role} commits its input offsets in, unless set. */
    public static String defaultGroupId(Role role) {
        return role.name() + "-pipeline";
    }

    public PipelineSettings withGroupId(String group) {
        return new PipelineSettings(inputTopics, group, maxBatchRecords, maxBatchWait);
    }

    public PipelineSettings withMaxBatchRecords(int records) {
        return new PipelineSettings(inputTopics, groupId, records, maxBatchWait);
    }

    public PipelineSettings withMaxBatchWait(Duration wait) {
        return new PipelineSettings(inputTopics, groupId, maxBatchRecords, wait);
    }
}

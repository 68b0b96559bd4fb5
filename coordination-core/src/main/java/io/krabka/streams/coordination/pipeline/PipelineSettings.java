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
 * @param deadLetters whether an input record whose outputs the cluster refuses (too large,
 *     invalid, for a topic or partition that does not exist) goes to its
 *     {@linkplain DeadLetters dead-letter topic} {@code <input>.DLT}, which must then exist
 *     for every input topic (checked when the pipeline starts, with the inputs); without, such
 *     a record ends the run with a {@link io.krabka.streams.coordination.CoordinationConfigurationException}
 *     naming it. Off unless set; {@code @LeaderListener} pipelines set it.
 */
public record PipelineSettings(
        List<String> inputTopics, String groupId, int maxBatchRecords, Duration maxBatchWait, boolean deadLetters) {

    /** Records per transaction unless set: Kafka's own {@code max.poll.records}. */
    public static final int DEFAULT_MAX_BATCH_RECORDS = 500;
    /** How long a batch may wait for more records unless set. */
    public static final Duration DEFAULT_MAX_BATCH_WAIT = Duration.ofMillis(20);

    /** Settings without dead letters. */
    public PipelineSettings(List<String> inputTopics, String groupId, int maxBatchRecords, Duration maxBatchWait) {
        this(inputTopics, groupId, maxBatchRecords, maxBatchWait, false);
    }

    public PipelineSettings {
        inputTopics = List.copyOf(Objects.requireNonNull(inputTopics, "inputTopics"));
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(maxBatchWait, "maxBatchWait");
        if (inputTopics.isEmpty() || inputTopics.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException(
                    "a pipeline needs at least one input topic, and no blank name: " + inputTopics);
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
        return new PipelineSettings(
                List.of(inputTopics), defaultGroupId(role), DEFAULT_MAX_BATCH_RECORDS, DEFAULT_MAX_BATCH_WAIT);
    }

    /** The dead-letter topic of each input topic, in order: where refused records go when {@link #deadLetters()}. */
    public List<String> deadLetterTopics() {
        return inputTopics.stream().map(DeadLetters::topicOf).toList();
    }

    /** The group id a pipeline of {@code role} commits its input offsets in, unless set. */
    public static String defaultGroupId(Role role) {
        return role.name() + "-pipeline";
    }

    public PipelineSettings withGroupId(String group) {
        return new PipelineSettings(inputTopics, group, maxBatchRecords, maxBatchWait, deadLetters);
    }

    public PipelineSettings withMaxBatchRecords(int records) {
        return new PipelineSettings(inputTopics, groupId, records, maxBatchWait, deadLetters);
    }

    public PipelineSettings withMaxBatchWait(Duration wait) {
        return new PipelineSettings(inputTopics, groupId, maxBatchRecords, wait, deadLetters);
    }

    /** These settings with refused records sent to their dead-letter topics, or not. */
    public PipelineSettings withDeadLetters(boolean enabled) {
        return new PipelineSettings(inputTopics, groupId, maxBatchRecords, maxBatchWait, enabled);
    }
}

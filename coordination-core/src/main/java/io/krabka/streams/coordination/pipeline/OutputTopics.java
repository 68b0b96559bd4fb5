package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * The topics a pipeline writes, as its consumer's metadata shows them: whether each
 * exists and how many partitions it has, asked once per topic and kept. A producer asked
 * to write a topic that does not exist waits for it up to its {@code max.block.ms} while
 * the transaction holds the lease (and the lease runs out); asked first, the pipeline
 * knows at once that the cluster would refuse that output.
 */
final class OutputTopics {

    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);

    private final PipelineSettings settings;
    /** Topics known to exist, with their partition counts. */
    private final Map<String, Integer> partitionCounts = new ConcurrentHashMap<>();

    OutputTopics(PipelineSettings settings) {
        this.settings = settings;
    }

    /** Fails naming the dead-letter topics that do not exist, when the pipeline has dead letters. */
    void requireDeadLetterTopics(Consumer<byte[], byte[]> consumer) {
        if (!settings.deadLetters()) {
            return;
        }
        List<String> missing = new ArrayList<>();
        for (String topic : settings.deadLetterTopics()) {
            if (partitions(consumer, topic, false) == 0) {
                missing.add(topic);
            }
        }
        if (!missing.isEmpty()) {
            throw new CoordinationConfigurationException("the dead-letter topic(s) " + missing + " of pipeline group "
                    + settings.groupId()
                    + " do not exist: create them with the input topics (an input record whose outputs"
                    + " cannot be written goes there; the pipeline never auto-creates a topic)");
        }
    }

    /**
     * Why the cluster would refuse one of {@code outputs} whatever the transaction: its
     * topic, or the partition it names, does not exist. Null when none is refused so.
     */
    @Nullable
    UnknownTopicOrPartitionException refusal(
            List<ProducerRecord<byte[], byte[]>> outputs, Consumer<byte[], byte[]> consumer) {
        for (ProducerRecord<byte[], byte[]> output : outputs) {
            int count = partitions(consumer, output.topic(), false);
            if (count == 0) {
                return new UnknownTopicOrPartitionException("the output topic " + output.topic()
                        + " does not exist, and the pipeline never creates a topic");
            }
            Integer partition = output.partition();
            if (partition != null && partition >= count && partition >= partitions(consumer, output.topic(), true)) {
                return new UnknownTopicOrPartitionException(
                        "partition " + partition + " of the output topic " + output.topic() + " does not exist: it has "
                                + partitionCounts.getOrDefault(output.topic(), 0) + " partition(s)");
            }
        }
        return null;
    }

    /** Forgets what it knows: after a write that failed, the cluster may have changed. */
    void forget() {
        partitionCounts.clear();
    }

    /**
     * The topic's partition count, 0 when it does not exist; asked again when {@code fresh}.
     * A topic this member may not describe counts as existing with any partition: the write
     * is then refused by the ACLs, and says so (Write on a topic includes Describe).
     */
    private int partitions(Consumer<byte[], byte[]> consumer, String topic, boolean fresh) {
        Integer known = fresh ? null : partitionCounts.get(topic);
        if (known != null) {
            return known;
        }
        List<PartitionInfo> infos;
        try {
            infos = consumer.partitionsFor(topic, METADATA_TIMEOUT);
        } catch (TopicAuthorizationException notDescribable) {
            return Integer.MAX_VALUE;
        }
        if (infos == null || infos.isEmpty()) {
            partitionCounts.remove(topic);
            return 0;
        }
        partitionCounts.put(topic, infos.size());
        return infos.size();
    }
}

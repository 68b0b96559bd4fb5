package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Finds the other coordination topic a role is contended on: the topic whose partition for
 * the role (by the same murmur2 pinning) has the foreign producer among its active
 * producers. Three requests, once per detection: list the topics, describe them, and
 * DescribeProducers on one partition of each. Topics this member may not describe or read
 * are skipped, so an answer is best effort.
 */
final class OtherTopics {

    /** Enough for a real cluster's topics, bounded for one that has very many. */
    static final int MAX_TOPICS = 2_000;

    private OtherTopics() {}

    /** The other topic, if found within {@code timeout} in all (not per request). */
    static Optional<String> writtenBy(Admin admin, String ownTopic, Role role, long producerId, Duration timeout) {
        try {
            return search(admin, ownTopic, role, producerId, System.nanoTime() + timeout.toNanos());
        } catch (Exception e) {
            throw KafkaErrors.translate(
                    "looking for the topic producer " + producerId + " writes role " + role + " to", e);
        }
    }

    private static Optional<String> search(Admin admin, String ownTopic, Role role, long producerId, long deadline)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        List<String> names = admin.listTopics().names().get(left(deadline), TimeUnit.NANOSECONDS).stream()
                .filter(name -> !name.equals(ownTopic))
                .sorted()
                .limit(MAX_TOPICS)
                .toList();
        if (names.isEmpty()) {
            return Optional.empty();
        }
        List<TopicPartition> candidates = new ArrayList<>();
        for (Map.Entry<String, KafkaFuture<TopicDescription>> topic :
                admin.describeTopics(names).topicNameValues().entrySet()) {
            TopicDescription description = answer(topic.getValue(), deadline);
            if (description != null && !description.partitions().isEmpty()) {
                candidates.add(new TopicPartition(
                        topic.getKey(),
                        RolePartitioner.partitionFor(
                                role, description.partitions().size())));
            }
        }
        DescribeProducersResult producers = admin.describeProducers(candidates);
        for (TopicPartition candidate : candidates) {
            DescribeProducersResult.PartitionProducerState state =
                    answer(producers.partitionResult(candidate), deadline);
            if (state != null && state.activeProducers().stream().anyMatch(p -> p.producerId() == producerId)) {
                return Optional.of(candidate.topic());
            }
        }
        return Optional.empty();
    }

    private static long left(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    /** The answer, or null when the cluster refused this one (an ACL, a topic just deleted). */
    private static <T> @Nullable T answer(KafkaFuture<T> future, long deadline)
            throws InterruptedException, java.util.concurrent.TimeoutException {
        try {
            return future.get(left(deadline), TimeUnit.NANOSECONDS);
        } catch (ExecutionException refused) {
            return null;
        }
    }
}

package io.krabka.streams.coordination.kafka;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Uuid;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What pins the topic a member works on: the cluster that answers (another one behind the
 * same address, after a disaster-recovery switch), a re-created or an altered topic
 * differs in one of these.
 *
 * @param clusterId the id of the cluster that answered; null when it did not tell
 * @param topicId the topic's id; null when the topic does not exist (there)
 * @param partitions the topic's partition count; 0 when it does not exist
 */
record TopicIdentity(@Nullable String clusterId, @Nullable Uuid topicId, int partitions) {

    private static final Logger log = LoggerFactory.getLogger(TopicIdentity.class);

    /** The identity of {@code description} (null: the topic is gone) on the cluster whose id {@code clusterId} brings. */
    static TopicIdentity of(KafkaFuture<String> clusterId, @Nullable TopicDescription description, Duration timeout) {
        String cluster = clusterId(clusterId, timeout);
        return description == null
                ? new TopicIdentity(cluster, null, 0)
                : new TopicIdentity(
                        cluster, description.topicId(), description.partitions().size());
    }

    /** Asks for the cluster's id (DescribeCluster, which any broker answers from its metadata cache). */
    static KafkaFuture<String> askClusterId(Admin admin, Duration timeout) {
        return admin.describeCluster(
                        new DescribeClusterOptions().timeoutMs((int) Math.min(Integer.MAX_VALUE, timeout.toMillis())))
                .clusterId();
    }

    /** Whether the topic exists. */
    boolean exists() {
        return topicId != null;
    }

    /** Whether {@code other} is the same topic: the same id and partition count, on whatever cluster. */
    boolean sameTopicAs(TopicIdentity other) {
        return Objects.equals(topicId, other.topicId) && partitions == other.partitions;
    }

    /** Whether {@code other} was read from another cluster; false when either did not tell its id. */
    boolean otherClusterThan(TopicIdentity other) {
        return clusterId != null && other.clusterId != null && !clusterId.equals(other.clusterId);
    }

    /**
     * The cluster's id, or null when it cannot be read (a backend that does not tell, a
     * request that failed): the topic's own identity is checked all the same.
     */
    private static @Nullable String clusterId(KafkaFuture<String> clusterId, Duration timeout) {
        try {
            return clusterId.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw KafkaErrors.translate("reading the cluster id", e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            log.debug("Could not read the cluster id: {}", e.toString());
            return null;
        }
    }
}

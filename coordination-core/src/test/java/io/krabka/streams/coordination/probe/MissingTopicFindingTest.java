package io.krabka.streams.coordination.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

/**
 * The probe's WARN for a coordination topic that is missing while creating it is off
 * gives the same settings as the members' error for it (MissingTopicAdviceTest), the
 * partition count included: a topic created by hand with another count is refused.
 */
class MissingTopicFindingTest {

    private static Admin withoutTopic(String topic) {
        return (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    if (method.getName().equals("describeTopics")) {
                        KafkaFutureImpl<TopicDescription> missing = new KafkaFutureImpl<>();
                        missing.completeExceptionally(new UnknownTopicOrPartitionException(
                                "This server does not host this topic-partition."));
                        return new DescribeTopicsResult(null, Map.of(topic, missing)) {};
                    }
                    if (method.getName().equals("describeConfigs")) {
                        throw new UnsupportedOperationException("the topic is missing: no config to describe");
                    }
                    throw new UnsupportedOperationException("not in this test: " + method.getName());
                });
    }

    @Test
    void theFindingGivesEverySettingTheTopicNeedsTheCountIncluded() {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName("__coord_absent")
                .withPartitions(3)
                .withReplicationFactor(1)
                .withAllowUnsafe(true)
                .withCreate(false);

        List<ProbeCheck> checks =
                new TopicChecks(withoutTopic(spec.name()), spec, Duration.ofSeconds(5), null).run(List.of());

        ProbeCheck topic = checks.get(0);
        assertThat(topic.name()).isEqualTo("topic");
        assertThat(topic.status()).isEqualTo(ProbeStatus.WARN);
        assertThat(topic.fix())
                .isEqualTo("create it with cleanup.policy=compact, 3 partitions, replication factor 3,"
                        + " min.insync.replicas 2 and unclean.leader.election.enable=false (a development cluster"
                        + " with fewer brokers may use replication factor 1 and min.insync.replicas 1: accepted as"
                        + " unsafe), or enable creation (krabka.coordination.topic.create=true, TopicSpec.create)");
    }
}

package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

/**
 * A coordination topic that is missing while creating it is off: the error gives the
 * settings the fencing probe asks for (its {@code topic} WARN in the same log), not the
 * configured replication factor alone, which on a development cluster is 1 and
 * contradicted the probe's "replication factor 3, min.insync.replicas 2".
 */
public class MissingTopicAdviceTest {

    /** An admin on a cluster where the topic does not exist; every other call fails the test. */
    public static Admin withoutTopic(String topic) {
        return (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    if (method.getName().equals("describeTopics")) {
                        KafkaFutureImpl<TopicDescription> missing = new KafkaFutureImpl<>();
                        missing.completeExceptionally(new UnknownTopicOrPartitionException(
                                "This server does not host this topic-partition."));
                        return new DescribeTopicsResult(null, Map.of(topic, missing)) {};
                    }
                    throw new UnsupportedOperationException("not in this test: " + method.getName());
                });
    }

    @Test
    void theErrorGivesTheSettingsTheProbeRequiresWithTheUnsafeFactorOnlyAsADevelopmentException() {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName("__coord_absent")
                .withPartitions(3)
                .withReplicationFactor(1)
                .withAllowUnsafe(true)
                .withCreate(false);

        assertThatThrownBy(() -> CoordinationTopic.ensure(withoutTopic(spec.name()), spec, Duration.ofSeconds(5)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageStartingWith("the coordination topic __coord_absent does not exist and creating it is"
                        + " disabled: create it with cleanup.policy=compact, 3 partitions, replication factor 3,"
                        + " min.insync.replicas 2, unclean.leader.election.enable=false, min.compaction.lag.ms=3600000 and message.timestamp.type=CreateTime (a development cluster"
                        + " with fewer brokers may use replication factor 1 and min.insync.replicas 1: accepted as"
                        + " unsafe), or enable creation (krabka.coordination.topic.create=true")
                .hasMessageNotContaining("replication 1 or");
    }

    @Test
    void aConfiguredFactorAboveThreeIsTheOneToCreateWith() {
        TopicSpec spec = TopicSpec.DEFAULTS.withReplicationFactor(5).withCreate(false);

        assertThatThrownBy(() -> CoordinationTopic.ensure(withoutTopic(spec.name()), spec, Duration.ofSeconds(5)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining(
                        "create it with cleanup.policy=compact, 50 partitions, replication factor 5,"
                                + " min.insync.replicas 2, unclean.leader.election.enable=false, min.compaction.lag.ms=3600000 and message.timestamp.type=CreateTime, or enable creation")
                .hasMessageNotContaining("accepted as unsafe");
    }

    /** Every setting the members create the topic with is in the advice, so the two cannot drift apart again. */
    @Test
    void theAdviceNamesEverySettingTheMembersCreateTheTopicWith() {
        TopicSpec spec = TopicSpec.DEFAULTS.withCreate(false);

        CoordinationTopic.configs(spec)
                .forEach((name, value) -> assertThat(spec.settingsToCreate())
                        .as("the advice for %s", name)
                        .containsPattern(Pattern.quote(name) + "[ =]" + Pattern.quote(value)));
    }
}

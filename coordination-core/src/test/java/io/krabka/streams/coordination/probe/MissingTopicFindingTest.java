package io.krabka.streams.coordination.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.kafka.MissingTopicAdviceTest;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The probe's WARN for a coordination topic that is missing while creating it is off
 * gives the same settings as the members' error for it (MissingTopicAdviceTest), the
 * partition count included: a topic created by hand with another count is refused.
 */
class MissingTopicFindingTest {

    @Test
    void theFindingGivesEverySettingTheTopicNeedsTheCountIncluded() {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName("__coord_absent")
                .withPartitions(3)
                .withReplicationFactor(1)
                .withAllowUnsafe(true)
                .withCreate(false);

        List<ProbeCheck> checks = new TopicChecks(
                        MissingTopicAdviceTest.withoutTopic(spec.name()), spec, Duration.ofSeconds(5), null)
                .run(List.of());

        ProbeCheck topic = checks.get(0);
        assertThat(topic.name()).isEqualTo("topic");
        assertThat(topic.status()).isEqualTo(ProbeStatus.WARN);
        assertThat(topic.fix())
                .isEqualTo("create it with cleanup.policy=compact, 3 partitions, replication factor 3,"
                        + " min.insync.replicas 2, unclean.leader.election.enable=false, min.compaction.lag.ms=3600000 and message.timestamp.type=CreateTime (a development cluster"
                        + " with fewer brokers may use replication factor 1 and min.insync.replicas 1: accepted as"
                        + " unsafe), or enable creation (krabka.coordination.topic.create=true, TopicSpec.create)");
    }
}

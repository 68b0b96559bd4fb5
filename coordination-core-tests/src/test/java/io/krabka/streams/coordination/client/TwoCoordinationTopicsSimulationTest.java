package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ChallengeCheck;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Members of one role pointed at different coordination topics share the role's
 * transactional id and nothing else: each sees no lease of the other. The one fenced first
 * must not fence back on every pass; it waits behind an epoch it cannot explain and, after
 * {@link ChallengeCheck#foreignWriterAfter}, names the mistake: both topics, the role and
 * itself.
 */
class TwoCoordinationTopicsSimulationTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
    private static final Role ROLE = Role.of("dispatcher");

    @Test
    void membersOnDifferentTopicsFenceEachOtherOnceAndTheFencedOneNamesBothTopics() {
        try (ManualRuntime runtime = new ManualRuntime()) {
            InMemoryCluster cluster = new InMemoryCluster(runtime);
            List<String> grants = new CopyOnWriteArrayList<>();
            Contender onA = contender(cluster, runtime, "coordination-a", "m1", grants);
            onA.start();
            assertThat(runtime.advanceUntil(() -> onA.leadership().isPresent(), Duration.ofSeconds(10)))
                    .isTrue();
            Contender onB = contender(cluster, runtime, "coordination-b", "m2", grants);
            onB.start();

            runtime.advance(ChallengeCheck.foreignWriterAfter(CONFIG).multipliedBy(3));

            assertThat(grants).as("one grant on each topic, no fencing loop").containsExactly("m1", "m2");
            assertThat(onB.leadership()).isPresent();
            assertThat(onA.leadership()).isEmpty();
            assertThat(onA.problem()).containsInstanceOf(CoordinationConfigurationException.class);
            assertThat(onA.problem().orElseThrow().getMessage())
                    .contains(
                            "role dispatcher",
                            "coordination-a",
                            "coordination-b",
                            "member m1",
                            "different coordination topics");
            assertThat(onB.problem())
                    .as("the holder cannot see the other topic")
                    .isEmpty();
        }
    }

    private static Contender contender(
            InMemoryCluster cluster, ManualRuntime runtime, String topic, String member, List<String> grants) {
        CoordinationClient client = new CoordinationClient(
                cluster.transport(TopicSpec.DEFAULTS.withName(topic).withPartitions(2)), CONFIG, runtime);
        return new Contender(client, ROLE, MemberId.of(member), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                grants.add(member);
            }

            @Override
            public void ended(
                    Leadership leadership,
                    io.krabka.streams.coordination.LeadershipEndCause cause,
                    Throwable failure) {}
        });
    }
}

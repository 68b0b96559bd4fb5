package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A member stopping while every pass thread is busy (at scale: the holders' reads and the
 * contending roles' passes of a member that just took 1 000 roles) still releases each role
 * it holds at once: a holder's release runs on the renewal threads, as its renewals do. When
 * it queued behind the passes, a real member stopping right after taking 1 000 roles
 * released 2 of them within its stop timeout and abandoned 998 without a tombstone.
 */
class StopBehindBusyPassesSimulationTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofMillis(500));
    private static final List<Role> ROLES =
            IntStream.range(0, 6).mapToObj(i -> Role.of("held-" + i)).toList();

    @Test
    void aStopReleasesEveryHeldRoleWhileThePassThreadIsBusy() throws Exception {
        try (ManualRuntime runtime =
                ManualRuntime.builder().passThreads(1).renewalThreads(2).build()) {
            InMemoryCluster cluster = new InMemoryCluster(runtime);
            CoordinationClient client =
                    new CoordinationClient(cluster.transport(TopicSpec.DEFAULTS.withPartitions(3)), CONFIG, runtime);
            HoldingMember member = HoldingMember.holdingAll(runtime, client, ROLES);

            // The only pass thread is taken for a minute, as a queue of slow passes would take it.
            runtime.passes().execute(() -> {
                try {
                    runtime.sleep(Duration.ofMinutes(1));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            runtime.advance(Duration.ofMillis(1));
            member.contenders().forEach(Contender::stop);

            assertThat(runtime.advanceUntil(() -> member.ends().size() == ROLES.size(), Duration.ofSeconds(5)))
                    .as("every role's leadership ended within 5 s of the stop: %s", member.ends())
                    .isTrue();
            assertThat(member.ends().values()).containsOnly(LeadershipEndCause.RELEASED);
        }
    }
}

package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** What a contender's pass survives: a listener's {@link Error}, a stop while the cluster times out. */
class PassFailureTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final LeaseConfig FAST =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(200), Duration.ofMillis(200));
    private static final Role ROLE = Role.of("controller");

    /** Issue 36, finding 4: one Error from {@code renewed} left the pass flagged as running, so no pass ran again. */
    @Test
    void anErrorFromARenewalListenerNeitherStopsTheRenewalsNorTheStop() {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        CoordinationClient client = new CoordinationClient(transport, FAST, InstantSource.system());
        AtomicInteger renewals = new AtomicInteger();
        Contender contender = new Contender(client, ROLE, MemberId.of("a"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}

            @Override
            public void renewed(Leadership leadership, Duration took) {
                renewals.incrementAndGet();
                throw new AssertionError("a listener's assertion, as a test's would be");
            }
        });
        contender.start();
        // Not failing on the error where it escapes: what counts is whether the member goes on.
        await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> renewals.get() >= 1);
        long term = contender.leadership().orElseThrow().term();

        await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> renewals.get() >= 4);
        assertThat(contender.leadership())
                .as("the same leadership, still renewed")
                .isPresent()
                .hasValueSatisfying(held -> assertThat(held.term()).isEqualTo(term));

        contender.stop();
        assertThat(contender.awaitStopped(Duration.ofSeconds(10)))
                .as("the stop finishes")
                .isTrue();
        assertThat(contender.isRunning()).isFalse();
        assertThat(client.observe(ROLE, Duration.ZERO).lease())
                .as("released with a tombstone")
                .isEmpty();
    }

    /** Issue 36, finding 7: a stop while the cluster timed out skipped the leave, and with it closing the prepared producer. */
    @Test
    void aStopDuringAClusterTimeoutClosesTheProducerPreparedForTheChallenge() {
        InMemoryCluster cluster = new InMemoryCluster().operationTimeout(Duration.ofMillis(300));
        CoordinationClient holderClient =
                new CoordinationClient(cluster.transport(TOPIC), FAST, InstantSource.system());
        InMemoryCoordinationTransport standbyTransport = cluster.transport(TOPIC);
        CoordinationClient standbyClient = new CoordinationClient(standbyTransport, FAST, InstantSource.system());
        Contender holder = new Contender(holderClient, ROLE, MemberId.of("a"), quiet());
        Contender standby = new Contender(standbyClient, ROLE, MemberId.of("b"), quiet());
        holder.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> holder.leadership().isPresent());
        standby.start();
        // Next in line under Balance.NONE: the standby builds the role's producer ahead of its challenge.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> standbyTransport.preparedRoles().contains(ROLE));

        TopicPartition partition =
                new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(ROLE, TOPIC.partitions()));
        InMemoryCluster.Fault dead = cluster.freezePartition(partition);
        try {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> standby.problem()
                            .filter(CoordinationTimeoutException.class::isInstance)
                            .isPresent());
            standby.stop();
            assertThat(standby.awaitStopped(Duration.ofSeconds(10))).isTrue();
            assertThat(standbyTransport.preparedRoles())
                    .as("no producer outlives the stop")
                    .doesNotContain(ROLE);
        } finally {
            dead.close();
        }
        holder.stop();
        assertThat(holder.awaitStopped(Duration.ofSeconds(10))).isTrue();
    }

    private static Contender.Listener quiet() {
        return new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        };
    }
}

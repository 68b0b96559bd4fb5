package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A started holder on a manual runtime whose wall clock is stepped back while its renewals cannot commit. */
class HolderClockStepTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
    private static final Role ROLE = Role.of("dispatcher");

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(30));
    private final InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(1));
    private final List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aWallClockSteppedBackDoesNotKeepAHolderWhoseRenewalsBlockBelievingPastItsLease() {
        CoordinationClient client = new CoordinationClient(transport, CONFIG, runtime);
        Contender contender = new Contender(client, ROLE, MemberId.of("n1"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add(cause);
            }
        });
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(5)))
                .isTrue();

        // Its renewals block from now on, and its wall clock jumps back an hour.
        cluster.freezeCoordinator(ROLE);
        runtime.wallClock().set(runtime.wallClock().instant().minus(Duration.ofHours(1)));
        runtime.advance(CONFIG.duration().plus(Duration.ofMillis(200)));

        assertThat(contender.leadership())
                .as("still believes it holds, a lease after its last renewal")
                .isEmpty();
        assertThat(ends).containsExactly(LeadershipEndCause.EXPIRED);
    }
}

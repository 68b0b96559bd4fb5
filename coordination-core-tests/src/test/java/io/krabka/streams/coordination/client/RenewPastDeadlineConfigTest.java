package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ListenerLog;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A renew interval at or past the lease's duration: every holder's lease runs out before its
 * first renewal, and the role changes hands every lease with no error anywhere (an outside
 * review: seven EXPIRED ends in 30 s for a lone healthy member). The Spring settings refused
 * it; a client built on the core now does too. {@code LeaseConfig} itself accepts it, so that
 * {@code withDuration(...).withRenewInterval(...)} can change both in either order.
 */
class RenewPastDeadlineConfigTest {

    private static final Role ROLE = Role.of("dispatcher");

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final ListenerLog log = new ListenerLog();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aClientRefusesARenewIntervalThatIsNotShorterThanTheLease() {
        LeaseConfig config = new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(5), Duration.ofMillis(500));
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(1));

        assertThatIllegalArgumentException()
                .isThrownBy(() -> new CoordinationClient(transport, config, runtime))
                .withMessageContaining("renewInterval (PT5S) must be shorter than its duration (PT3S)");
        assertThatIllegalArgumentException()
                .isThrownBy(() ->
                        new CoordinationClient(transport, config.withRenewInterval(Duration.ofSeconds(3)), runtime))
                .withMessageContaining("must be shorter");
    }

    @Test
    void aClientAcceptsARenewIntervalShorterThanTheLeaseAndItsHolderKeepsTheRole() {
        LeaseConfig config = new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(500));
        CoordinationClient client =
                new CoordinationClient(cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)), config, runtime);
        Contender contender = new Contender(client, ROLE, MemberId.of("a"), log.of("a"));
        contender.start();
        runtime.advance(Duration.ofSeconds(30));

        assertThat(contender.leadership()).as("held after 30 s").isPresent();
        assertThat(log.ends()).as("no leadership ended").isEmpty();
    }
}

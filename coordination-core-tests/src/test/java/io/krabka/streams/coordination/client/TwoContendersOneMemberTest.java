package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

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
 * Two contenders of one role on one client: the second failed every pass ("a already holds
 * role") and logged it with a stack trace every second, for ever (an outside review). One
 * client serves one member per role, so the second's start is refused while the first runs.
 */
class TwoContendersOneMemberTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(500));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
    private final ListenerLog log = new ListenerLog();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aSecondContenderOfARoleOnOneClientIsRefusedUntilTheFirstStops() {
        CoordinationClient client = new CoordinationClient(transport, CONFIG, runtime);
        Contender first = new Contender(client, ROLE, MemberId.of("a"), log.of("first"));
        Contender second = new Contender(client, ROLE, MemberId.of("a"), log.of("second"));
        Contender otherMember = new Contender(client, ROLE, MemberId.of("b"), log.of("b"));
        first.start();
        assertThat(runtime.advanceUntil(() -> first.leadership().isPresent(), Duration.ofSeconds(10)))
                .isTrue();

        assertThatIllegalStateException()
                .isThrownBy(second::start)
                .withMessageContaining("a contender for role " + ROLE + " already runs on this client (member a)");
        assertThatIllegalStateException().isThrownBy(otherMember::start);
        runtime.advance(Duration.ofSeconds(10));
        assertThat(log.events()).as("only the first contended").containsExactly("first granted");

        first.stop();
        assertThat(runtime.advanceUntil(() -> !first.isRunning(), Duration.ofSeconds(10)))
                .isTrue();
        runtime.advance(Duration.ofSeconds(1));
        second.start();
        assertThat(runtime.advanceUntil(() -> second.leadership().isPresent(), Duration.ofSeconds(10)))
                .as("the second, once the first stopped: %s", log)
                .isTrue();
    }
}

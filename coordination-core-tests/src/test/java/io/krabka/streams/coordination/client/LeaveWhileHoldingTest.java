package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ListenerLog;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code CoordinationClient.leave(role, me)} while {@code me} holds the role through the same
 * client appended the registration's tombstone, which standbys read as the lease's end: one
 * was granted at once while the holder's leadership still said ACTIVE (an outside review).
 * It is refused now; releasing the leadership is the way to step down.
 */
class LeaveWhileHoldingTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(5));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final ListenerLog log = new ListenerLog();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void leaveWhileHoldingIsRefusedAndTheHolderKeepsWriting() {
        cluster.createTopic("out", 1);
        CoordinationClient aClient = new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);
        Leadership held = aClient.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        Contender b = new Contender(
                new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime), ROLE, MemberId.of("b"), log.of("b"));
        b.start();
        runtime.advance(Duration.ofSeconds(2));
        assertThat(b.leadership()).isEmpty();

        assertThatIllegalStateException()
                .isThrownBy(() -> aClient.leave(ROLE, MemberId.of("a")))
                .withMessageContaining("release the leadership first");
        runtime.advance(Duration.ofSeconds(1));

        assertThat(b.leadership()).as("b, after a's refused leave: %s", log).isEmpty();
        assertThat(held.isActive()).isTrue();
        held.write(new ProducerRecord<>(
                "out", "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)));

        held.close();
        assertThat(runtime.advanceUntil(() -> b.leadership().isPresent(), Duration.ofSeconds(5)))
                .as("b after a's release")
                .isTrue();
    }
}

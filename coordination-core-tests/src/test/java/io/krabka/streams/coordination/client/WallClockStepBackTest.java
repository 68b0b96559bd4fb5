package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ListenerLog;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The wall clock of every member steps back (an NTP correction) with the cluster healthy.
 * The holder ended its lease by the monotonic ticker but scheduled its renewal by the wall
 * clock alone, so after a step back of more than duration - renewInterval it stopped renewing,
 * its leadership ended EXPIRED and its work was interrupted, again and again (an outside
 * review). Renewals are now due by whichever clock says so first, as expiry is.
 */
class WallClockStepBackTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(500));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final ListenerLog log = new ListenerLog();
    private final List<Contender> contenders = new ArrayList<>();

    @AfterEach
    void close() {
        runtime.close();
    }

    private Contender member(String name) {
        CoordinationClient client = new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);
        Contender contender = new Contender(client, ROLE, MemberId.of(name), log.of(name));
        contenders.add(contender);
        return contender;
    }

    private boolean someoneHolds() {
        return contenders.stream().anyMatch(c -> c.leadership().isPresent());
    }

    @Test
    void aHealthyHolderKeepsItsRoleWhenTheWallClockStepsBack() {
        Contender a = member("a");
        Contender b = member("b");
        a.start();
        assertThat(runtime.advanceUntil(() -> a.leadership().isPresent(), Duration.ofSeconds(10)))
                .isTrue();
        b.start();
        runtime.advance(Duration.ofSeconds(5));
        assertThat(a.leadership()).isPresent();

        runtime.wallClock().set(runtime.wallClock().instant().minus(Duration.ofMinutes(10)));

        // From now on no fault: count the time the role has no holder over two minutes.
        long without = 0;
        long longest = 0;
        for (int i = 0; i < 1200; i++) {
            runtime.advance(Duration.ofMillis(100));
            if (someoneHolds()) {
                without = 0;
            } else {
                without += 100;
                longest = Math.max(longest, without);
            }
        }
        assertThat(log.events())
                .as(
                        "a healthy holder across a wall-clock step back (no cluster fault); the role was without a"
                                + " holder for %d ms",
                        longest)
                .containsExactly("a granted");
    }
}

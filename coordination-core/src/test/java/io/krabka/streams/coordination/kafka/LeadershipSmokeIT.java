package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CoordinationClient;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Leadership;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class LeadershipSmokeIT {

    static KafkaTestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = KafkaTestCluster.start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void standbyTakesOverAfterTheDeadlineAndTheOldHolderIsFenced() throws Exception {
        ManualClock clock = new ManualClock();
        Role role = Role.of("smoke");
        try (KafkaCoordinationTransport ta = cluster.transport(); KafkaCoordinationTransport tb = cluster.transport();
             CoordinationClient a = new CoordinationClient(ta, LeaseConfig.DEFAULTS, clock);
             CoordinationClient b = new CoordinationClient(tb, LeaseConfig.DEFAULTS, clock)) {
            Leadership held = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
            assertThat(b.tryAcquire(role, MemberId.of("b"))).isEmpty();
            System.out.println("describe: " + a.describe(role) + " current=" + a.describe(role).current());
            assertThat(b.describe(role).current()).isTrue();
            held.renew();
            assertThat(b.describe(role).current()).isTrue();

            clock.advance(Duration.ofSeconds(31));
            Optional<Leadership> taken = b.tryAcquire(role, MemberId.of("b"));
            assertThat(taken).isPresent();
            assertThat(taken.get().token().supersedes(held.token())).isTrue();
            assertThat(b.describe(role).holder()).contains(MemberId.of("b"));
            assertThatThrownBy(held::renew).isInstanceOf(FencedException.class);
            assertThat(b.describe(role).current()).isTrue();
        }
    }
}

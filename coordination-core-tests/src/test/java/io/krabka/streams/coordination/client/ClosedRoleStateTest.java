package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ContenderState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, finding 6: a client keeps per-role state (folds, sightings, challenge records,
 * grant times, registrations) only while something of it still uses the role. A member
 * that opens and closes roles all day must not grow by each one it ever had.
 */
class ClosedRoleStateTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(7);
    private static final int MANY = 2_000;

    private final ManualRuntime runtime = ManualRuntime.builder()
            .clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void underSpreadTheBalancerKeepsNothingOfTheStoppedRolesEither() {
        CoordinationClient client = client().balance(Balance.SPREAD);
        Members a = new Members(client, "a", roles("spread-", 200));
        a.startAll();
        assertThat(runtime.advanceUntil(() -> a.granted.get() == 200, Duration.ofSeconds(30)))
                .as("all roles held")
                .isTrue();
        // Balancer ticks read every role while they are held.
        runtime.advance(CONFIG.renewInterval().multipliedBy(2));
        assertThat(client.roleEntries().get("balancer.viewed")).isEqualTo(200);

        a.stopAll();
        runtime.advance(CONFIG.renewInterval().multipliedBy(2));

        assertThat(client.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    @Test
    void twoThousandContendersThatHeldTheirRolesAndStoppedLeaveNoRoleStateInTheClient() {
        CoordinationClient client = client();
        Members a = new Members(client, "a", roles("held-", MANY));
        a.startAll();
        assertThat(runtime.advanceUntil(() -> a.granted.get() == MANY, Duration.ofSeconds(30)))
                .as("all roles held")
                .isTrue();
        assertThat(client.roleEntries().get("folds.views")).isEqualTo(MANY);

        a.stopAll();

        assertThat(client.roleEntries())
                .as("per-role entries after %d roles were held and closed", MANY)
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    @Test
    void standbysThatStopLeaveNoRoleStateWhileTheHoldersKeepTheirs() {
        List<Role> roles = roles("shared-", 50);
        CoordinationClient holderClient = client();
        CoordinationClient standbyClient = client();
        Members holder = new Members(holderClient, "a", roles);
        Members standby = new Members(standbyClient, "b", roles);
        holder.startAll();
        assertThat(runtime.advanceUntil(() -> holder.granted.get() == roles.size(), Duration.ofSeconds(10)))
                .isTrue();
        standby.startAll();
        // Standbys through a few renewals: they see leases, bound them, and wait their turn.
        runtime.advance(CONFIG.renewInterval().multipliedBy(3));
        assertThat(standby.granted.get()).isZero();
        assertThat(standbyClient.roleEntries().get("leaseBounds.leases")).isEqualTo(roles.size());

        standby.stopAll();

        assertThat(standbyClient.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
        assertThat(holderClient.roleEntries().get("folds.views"))
                .as("the holders' folds stay")
                .isEqualTo(roles.size());
        holder.stopAll();
        assertThat(holderClient.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    @Test
    void leadershipsTakenWithTryAcquireAndReleasedLeaveNoRoleState() {
        CoordinationClient client = client();
        MemberId me = MemberId.of("a");
        for (Role role : roles("acquired-", MANY)) {
            Leadership leadership = client.tryAcquire(role, me).orElseThrow();
            leadership.close();
        }
        assertThat(client.roleEntries())
                .as("per-role entries after %d roles were acquired and released", MANY)
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    @Test
    void aMemberThatLostTryAcquireKeepsItsStateWhileRegisteredAndDropsItWhenItLeaves() {
        Role role = Role.of("contested");
        CoordinationClient holderClient = client();
        CoordinationClient other = client();
        Leadership held = holderClient.tryAcquire(role, MemberId.of("a")).orElseThrow();
        assertThat(other.tryAcquire(role, MemberId.of("b"))).isEmpty();
        // Still in the roster at its rank: the next try must not register again at the tail.
        assertThat(other.roleEntries()).containsEntry("registrations", 1).containsEntry("folds.views", 1);

        assertThat(other.leave(role, MemberId.of("b"))).isTrue();

        assertThat(other.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
        held.close();
        assertThat(holderClient.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    @Test
    void aSecondContenderOfARoleStartedRightAfterTheFirstStoppedTakesItAndKeepsItsState() {
        CoordinationClient client = client();
        Role role = Role.of("restarted");
        Members first = new Members(client, "a", List.of(role));
        first.startAll();
        assertThat(runtime.advanceUntil(() -> first.granted.get() == 1, Duration.ofSeconds(10)))
                .isTrue();
        // The second starts before the first's release and leave ran.
        first.contenders.get(0).stop();
        Members second = new Members(client, "a", List.of(role));
        second.startAll();
        assertThat(runtime.advanceUntil(() -> first.stopped() && second.granted.get() == 1, Duration.ofSeconds(10)))
                .as("the second contender holds the role")
                .isTrue();
        runtime.advance(CONFIG.renewInterval().multipliedBy(2));
        assertThat(second.contenders.get(0).leadership()).isPresent();
        assertThat(client.roleEntries()).containsEntry("folds.views", 1).containsEntry("held", 1);

        second.stopAll();
        assertThat(client.roleEntries())
                .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
    }

    private CoordinationClient client() {
        return new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);
    }

    private static List<Role> roles(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> Role.of(prefix + i)).toList();
    }

    /** One member's contenders, with their grants counted (a counter: a condition checked after every event stays cheap). */
    private final class Members {
        final List<Contender> contenders;
        final AtomicInteger granted = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();

        Members(CoordinationClient client, String member, List<Role> roles) {
            this.contenders = roles.stream()
                    .map(role -> new Contender(client, role, MemberId.of(member), new Contender.Listener() {
                        @Override
                        public void granted(Leadership leadership) {
                            granted.incrementAndGet();
                        }

                        @Override
                        public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                            ended.incrementAndGet();
                        }
                    }))
                    .toList();
        }

        void startAll() {
            contenders.forEach(Contender::start);
        }

        void stopAll() {
            contenders.forEach(Contender::stop);
            assertThat(runtime.advanceUntil(this::stopped, Duration.ofSeconds(30)))
                    .as("every contender stopped")
                    .isTrue();
        }

        boolean stopped() {
            return contenders.stream().allMatch(c -> c.state() instanceof ContenderState.Stopped);
        }
    }
}

package io.krabka.streams.coordination.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The test kit keeps time honestly: {@link CoordinationTestSupport#advance} lets the roles
 * this member holds renew as they would in real time, so only a lease made to run out
 * ({@code fence}, {@code expire}) changes hands, and the lease clock starts today.
 */
@SpringBootTest(
        properties = {"krabka.coordination.roles=controller,reports,billing", "krabka.coordination.member-id=n1"})
@AutoConfigureCoordinationTest
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class TestKitClockTest {

    private static final List<Role> ROLES =
            Stream.of("controller", "reports", "billing").map(Role::of).toList();
    /** The starter's default lease. */
    private static final Duration LEASE = Duration.ofSeconds(30);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Work.class)
    static class App {}

    /** Work for each role that runs until its leadership ends, and every end this member saw. */
    static class Work {
        final List<LeadershipEndedEvent> ends = new CopyOnWriteArrayList<>();

        @OnLeadership(role = "controller")
        void control() throws InterruptedException {
            new CountDownLatch(1).await();
        }

        @OnLeadership(role = "reports")
        void report() throws InterruptedException {
            new CountDownLatch(1).await();
        }

        @OnLeadership(role = "billing")
        void bill() throws InterruptedException {
            new CountDownLatch(1).await();
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            ends.add(event);
        }
    }

    @Autowired
    CoordinationTestSupport coordination;

    @Autowired
    LeadershipLoop leadershipLoop;

    @Autowired
    Work work;

    @Test
    void advancingOverManyLeasesKeepsEveryRoleHeldWithItsTerm() {
        ROLES.forEach(role -> coordination.awaitLeader(role.name()));
        Map<Role, Long> terms = terms();
        Instant before = coordination.clock().instant();

        // Longer than any lease of the kit: a single jump of the clock would have expired them all.
        coordination.advance(Duration.ofMinutes(1));

        assertThat(coordination.clock().instant()).isEqualTo(before.plus(Duration.ofMinutes(1)));
        assertThat(terms())
                .as("the same member holds each role with the same term")
                .isEqualTo(terms);
        assertThat(work.ends).as("no leadership ended").isEmpty();
        // Each lease renewed as the time passed, so none runs out later at this instant either.
        assertThat(ROLES)
                .allSatisfy(role -> assertThat(
                                leadershipLoop.leadership(role).orElseThrow().deadline())
                        .as("the deadline of %s", role)
                        .isAfter(coordination.clock().instant()));
    }

    @Test
    void expireEndsOnlyThatRolesLeadership() {
        ROLES.forEach(role -> coordination.awaitLeader(role.name()));
        Map<Role, Long> terms = terms();

        coordination.expire("controller");

        await().until(() -> !work.ends.isEmpty());
        assertThat(work.ends).singleElement().satisfies(ended -> {
            assertThat(ended.role()).isEqualTo(ROLES.get(0));
            assertThat(ended.cause()).isEqualTo(LeadershipEndCause.EXPIRED);
        });
        // A confirming lease cut off in flight leaves an epoch no visible lease explains; the
        // member then waits, in the kit's time, for whoever may hold it: let that time pass.
        // Its wait starts when its next pass runs, which a busy machine may run only after one
        // long advance; so the kit's time moves a lease at a time, four leases at most.
        for (int leases = 0; leases < 4 && coordination.state("controller") != MemberRoleState.LEADER; leases++) {
            coordination.advance(LEASE);
        }
        coordination.awaitLeader("controller");
        Map<Role, Long> after = terms();
        assertThat(after.get(ROLES.get(0))).as("controller granted anew").isGreaterThan(terms.get(ROLES.get(0)));
        assertThat(after)
                .as("the other roles kept")
                .containsEntry(ROLES.get(1), terms.get(ROLES.get(1)))
                .containsEntry(ROLES.get(2), terms.get(ROLES.get(2)));
    }

    @Test
    void afterAFenceOnlyTheFencedRoleChangesHandsAndComesBack() {
        ROLES.forEach(role -> coordination.awaitLeader(role.name()));
        Map<Role, Long> terms = terms();

        coordination.fence("reports");
        coordination.advance(Duration.ofMinutes(2));
        coordination.awaitLeader("reports");

        // awaitLeader looks at the member's state, which the new grant sets while the fenced
        // leadership's ended listener may still run: it stops the work before it publishes
        // the event. Wait for the event before asserting what it says.
        await().until(() -> !work.ends.isEmpty());
        assertThat(work.ends)
                .extracting(LeadershipEndedEvent::role, LeadershipEndedEvent::cause)
                .containsExactly(tuple(ROLES.get(1), LeadershipEndCause.FENCED));
        Map<Role, Long> after = terms();
        assertThat(after.get(ROLES.get(1))).isGreaterThan(terms.get(ROLES.get(1)));
        assertThat(after)
                .containsEntry(ROLES.get(0), terms.get(ROLES.get(0)))
                .containsEntry(ROLES.get(2), terms.get(ROLES.get(2)));
    }

    @Test
    void theLeaseClockStartsTodayAndMovesOnlyWhenAdvanced() {
        Instant now = Instant.now();
        Instant start = coordination.clock().instant();

        assertThat(start)
                .isBetween(now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(1)))
                .isEqualTo(start.truncatedTo(ChronoUnit.SECONDS));
        coordination.awaitLeader("controller");
        assertThat(coordination.clock().instant()).as("pinned").isEqualTo(start);
        assertThat(leadershipLoop.leadership(ROLES.get(0)).orElseThrow().deadline())
                .as("the deadline a member logs")
                .isEqualTo(start.plus(Duration.ofSeconds(30)));
        assertThat(leadershipLoop.member()).isEqualTo(MemberId.of("n1"));
    }

    @Test
    void aNegativeAdvanceIsRefused() {
        assertThatThrownBy(() -> coordination.advance(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only moves forward");
    }

    private Map<Role, Long> terms() {
        return ROLES.stream()
                .collect(Collectors.toMap(
                        role -> role,
                        role -> leadershipLoop
                                .leadership(role)
                                .map(Leadership::term)
                                .orElseThrow(() -> new AssertionError(role + " is not held"))));
    }
}

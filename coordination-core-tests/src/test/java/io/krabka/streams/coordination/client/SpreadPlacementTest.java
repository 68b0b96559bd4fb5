package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static io.krabka.streams.coordination.client.SimulatedMembers.TICK;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the review of the SPREAD placement found: each test here fails on the commit under
 * review (50e90f0) and states the behaviour it expected. See {@link SpreadPlacementProbesTest}
 * for the cases that held.
 */
class SpreadPlacementTest extends SpreadPlacementHarness {

    /**
     * a, b and c start together; c crashes (freezes) right after it registered, before the
     * gather turn. a and b count c alive (it registered, never held a lease, and a placement
     * prunes no one), so each stops at a share of four and the four left wait a lease more.
     * Expected: every role held within one lease and a stagger of the start, and at most two
     * moves after. Measured on 50e90f0: all held after 2.4 s as a=8 b=4 (both full members
     * challenged at the same instant), then 2 handovers: 14 grants. (Before the placement,
     * 319ddc8: a took all 12 at once, 16 handovers, 28 grants.) Now the members at their
     * share go in turns, one stagger after the last place below them and one more per role
     * beyond it: all held after 2.4 s as 7/5, one or two moves. Waiting a whole lease more
     * instead gave 6/6 with no move, but held c's roles 3.9 s: the shorter wait was chosen.
     */
    @Test
    void aMemberThatCrashesBeforeItsGatherTurnLeavesNoRoleUnheldLong() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        sim.runFor(TICK.multipliedBy(2));
        assertThat(registrations(sim.members.get("c"))).as("c registered").isEqualTo(ROLES.size());
        sim.members.get("c").runtime.freeze();
        Duration took = sim.runUntil(() -> sim.held("a") + sim.held("b") == ROLES.size(), HOLDER_WITHIN);
        System.out.printf(
                "PLACEMENT crash before gather: all held after %s, shares %s, grants %s%n",
                took, sim.shares(), sim.grants);
        sim.runFor(CONFIG.duration().multipliedBy(5));
        long moves = sim.moves();
        System.out.printf(
                "PLACEMENT crash before gather: after 5 leases shares %s, %d grants, %d moves, ends %s%n",
                sim.shares(), sim.grants.size(), moves, sim.ends);
        assertThat(took)
                .as("every role held")
                .isLessThanOrEqualTo(
                        CONFIG.duration().plus(CONFIG.challengeStagger()).plus(TICK.multipliedBy(4)));
        assertThat(sim.grants).as("at most two moves").hasSizeLessThanOrEqualTo(ROLES.size() + 2);
        assertThat(Math.abs(sim.held("a") - sim.held("b")))
                .as("%s", sim.shares())
                .isLessThanOrEqualTo(1);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * The NONE member of SpreadSimulationTest's mixed case, through an outage of three leases.
     * NONE does not re-register: its lease ran out long ago, so it challenges at once when the
     * cluster is back, while the spread members register again and gather a stagger first.
     * Expected (the invariant of that test): NONE holds no more than the spread members.
     * Measured on 50e90f0: before the outage a=3 old=6 b=3; after it old=12, a=0, b=0 for good
     * (NONE never gives a role away). Before the change (319ddc8): 4/4/4 after the outage.
     * A regression for a rolling upgrade that meets an outage.
     */
    @Test
    void afterAnOutageAMemberOnNoneDoesNotTakeEveryRole() {
        start("a", Balance.SPREAD);
        sim.runUntil(() -> sim.held("a") == ROLES.size(), Duration.ofSeconds(10));
        start("old", Balance.NONE);
        start("b", Balance.SPREAD);
        sim.runUntil(
                () -> sim.held("old") > 0
                        && Math.abs(sim.held("a") - sim.held("b")) <= 1
                        && sim.held("a") < ROLES.size() / 2,
                Duration.ofSeconds(10));
        sim.runFor(CONFIG.duration().multipliedBy(2));
        Map<String, Integer> before = sim.shares();

        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runUntil(() -> sim.withHolder(ROLES) == 0, CONFIG.duration().multipliedBy(2));
        sim.runFor(CONFIG.duration().multipliedBy(2));
        sim.grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);
        long back = sim.runtime.nanoTime();
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT NONE after outage: before %s; placed after %s; now %s; grants %s%n",
                before, took, sim.shares(), sim.grants);
        assertThat(sim.held("old"))
                .as("before %s, after %s", before, sim.shares())
                .isLessThanOrEqualTo(sim.held("a") + sim.held("b"));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * The whole application stopped (every role released) and started again together, as a
     * deploy that is not rolling does: the roles had leases, so the cold-start rule does not
     * apply, and the first member to register takes every role and hands most away.
     * Expected, as for a first start: one share each, one grant per role, no move.
     * Measured on 50e90f0 (and the same before it): a2 took all 12 at once, then 9 handovers,
     * 21 grants. placesOnce excludes a role with a release (leaseReleasedAt), so this common
     * case (stop all, start all within delete.retention.ms) does not get the placement.
     */
    @Test
    void membersRestartedTogetherAfterAFullStopTakeTheirShareOnce() {
        startThreeEven();
        sim.stop(sim.members.values(), Duration.ofSeconds(10));
        sim.members.clear();
        sim.runFor(Duration.ofSeconds(5));
        sim.grants.clear();
        sim.ends.clear();
        start("a2", Balance.SPREAD);
        sim.runFor(Duration.ofMillis(200));
        start("b2", Balance.SPREAD);
        sim.runFor(Duration.ofMillis(200));
        start("c2", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(15));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT full restart: shares %s; %d grants; %d moves; grants %s%n",
                sim.shares(), sim.grants.size(), sim.moves(), sim.grants);
        assertThat(sim.grants).as("each role granted once").hasSize(ROLES.size());
        assertThat(sim.violations).isEmpty();
    }

    /**
     * After an outage every member back registers again once per role; the winner of a role
     * must then not treat the old holder as silent: it is back and registered after the lease.
     * ElectionPass.challengeNow still prunes the lease's member (Registrations.prune always adds
     * it) and calls Balancer.silent on it. The winner then counts that member dead until it
     * registers again, its fair share grows, and it takes more than its share in the same
     * placement (8000 ms outage: c removed a from role-8 and role-9 and b from role-6, logging
     * "it did not take the role in its turn", then took 6 of 12; three handovers followed).
     * Expected: one registration per role per member after the outage (none pruned), one grant
     * per role.
     */
    @Test
    void afterAnOutageTheWinnersRemoveNoMemberThatCameBack() {
        startThreeEven();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(Duration.ofMillis(8000));
        Map<String, Integer> before = registrationCounts();
        sim.grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Map<String, Integer> placed = sim.shares();
        sim.runFor(CONFIG.duration().multipliedBy(3));
        Map<String, Integer> written = new LinkedHashMap<>();
        registrationCounts().forEach((id, count) -> written.put(id, count - before.get(id)));
        System.out.printf(
                "PLACEMENT pruned after outage: registrations written %s; placed as %s; %d grants%n",
                written, placed, sim.grants.size());
        // At most one registration per role and member after the outage (none pruned, so none written twice).
        assertThat(written)
                .as("registrations after the outage; placed as %s", placed)
                .allSatisfy((id, count) -> assertThat(count).isLessThanOrEqualTo(ROLES.size()));
        assertThat(sim.grants).as("placed as %s: %s", placed, sim.grants).hasSize(ROLES.size());
        assertThat(sim.violations).isEmpty();
    }

    /**
     * SpreadSimulationTest's outage (the whole cluster away; three members, twelve roles), for
     * outages of several lengths, all longer than a lease and a stagger past the deadlines.
     * Expected, as that test claims for one length: 4/4/4 again, one grant per role, no move.
     * Measured on 50e90f0: 6000 and 10000 ms hold; 6500/7000 ms place 4/3/5 (13 grants, 1
     * move), 8000 ms 2/4/6 (15 grants, 3 moves), 9000 ms 3/4/5 (13 grants, 1 move). The cause
     * is {@link #afterAnOutageTheWinnersRemoveNoMemberThatCameBack}'s.
     */
    @ParameterizedTest(name = "outage of {0} ms")
    @ValueSource(ints = {6000, 6500, 7000, 8000, 9000, 10000})
    void afterAnOutageOfAnyLengthTheMembersPlaceTheRolesOnce(int outageMillis) {
        startThreeEven();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(Duration.ofMillis(outageMillis));
        long movesBefore = sim.moves();
        sim.grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);
        long back = sim.runtime.nanoTime();
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        Map<String, Integer> placed = sim.shares();
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT outage %d ms: placed after %s as %s; now %s; %d grants; %d moves; grants %s%n",
                outageMillis, took, placed, sim.shares(), sim.grants.size(), sim.moves() - movesBefore, sim.grants);
        assertThat(sim.grants).as("placed as %s, grants %s", placed, sim.grants).hasSize(ROLES.size());
        assertThat(sim.moves() - movesBefore).as("moves").isZero();
        assertThat(sim.violations).isEmpty();
    }
}

package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static io.krabka.streams.coordination.client.SimulatedMembers.TICK;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The cases the review of the SPREAD placement tried that held on the commit under review
 * (50e90f0): each prints its numbers (grep REVIEW in the output).
 */
class SpreadPlacementProbesTest extends SpreadPlacementHarness {

    /** One member alone on a fresh topic: how long to its first grant, and to all twelve. */
    @Test
    void aLoneMemberOnAFreshTopicTakesEveryRoleWithinAStagger() {
        long started = sim.runtime.nanoTime();
        start("a", Balance.SPREAD);
        Duration took = sim.runUntil(() -> sim.held("a") == ROLES.size(), HOLDER_WITHIN);
        Duration first = Duration.ofNanos(sim.grants.get(0).atNanos() - started);
        System.out.printf("PLACEMENT lone member: first grant after %s, all 12 after %s%n", first, took);
        assertThat(took)
                .as("all roles")
                .isLessThanOrEqualTo(CONFIG.challengeStagger().plus(TICK.multipliedBy(4)));
        assertThat(sim.grants).hasSize(ROLES.size());
    }

    /** More members than roles: each of three roles goes to a different member, each granted once. */
    @Test
    void moreMembersThanRolesPlaceEachRoleOnceOnDifferentMembers() {
        List<Role> three = ROLES.subList(0, 3);
        for (String id : List.of("a", "b", "c", "d", "e")) {
            start(id, Balance.SPREAD, three, Duration.ZERO);
        }
        Duration took = sim.runUntil(() -> sim.withHolder(three) == 3, HOLDER_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT more members than roles: placed after %s, shares %s, grants %s%n",
                took, sim.shares(), sim.grants);
        assertThat(sim.grants).as("each role granted once").hasSize(3);
        assertThat(sim.shares().values())
                .as("%s", sim.shares())
                .allSatisfy(held -> assertThat(held).isLessThanOrEqualTo(1));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * Members on different role sets started together: a contends for roles 0-3 only, b and c
     * for all twelve. a counts a share of ceil(4/3) = 2, b and c ceil(12/3) = 4: 2 + 4 + 4 = 10
     * places for 12 roles. Expected: all held within a lease and a stagger, then quiet.
     */
    @Test
    void membersOnDifferentRoleSetsAtColdStartPlaceEveryRoleAndThenStayQuiet() {
        start("a", Balance.SPREAD, ROLES.subList(0, 4), Duration.ZERO);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        Duration took = sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        int placed = sim.grants.size();
        sim.runFor(CONFIG.duration().multipliedBy(10));
        System.out.printf(
                "PLACEMENT different role sets: placed after %s with %d grants; after 10 leases %s, %d grants, %d moves%n",
                took, placed, sim.shares(), sim.grants.size(), sim.moves());
        assertThat(took)
                .isLessThanOrEqualTo(
                        CONFIG.duration().plus(CONFIG.challengeStagger()).plus(TICK.multipliedBy(4)));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A member on NONE (an older version) started together with two on SPREAD, the spread
     * ones first by one tick. NONE ranks by the roster and challenges at its own registration
     * plus its rank's stagger; the spread members wait for the gather turn. Expected (the
     * invariant of SpreadSimulationTest's NONE case): the member on NONE holds no more than
     * the spread members together.
     */
    @Test
    void aMemberOnNoneStartedWithSpreadMembersDoesNotTakeMostRoles() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        sim.runFor(TICK);
        start("old", Balance.NONE);
        sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(5));
        System.out.printf(
                "PLACEMENT NONE at cold start: shares %s, %d grants, %d moves%n",
                sim.shares(), sim.grants.size(), sim.moves());
        assertThat(sim.held("old")).as("%s", sim.shares()).isLessThanOrEqualTo(sim.held("a") + sim.held("b"));
        assertThat(sim.violations).isEmpty();
    }

    /** A member starting a stagger and a half after two others, while they still place. */
    @Test
    void aMemberStartingLateDuringThePlacementGetsItsShareWithFewMoves() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        sim.runFor(Duration.ofMillis(750));
        start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(15));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT late starter: shares %s, %d grants, %d moves, grants %s%n",
                sim.shares(), sim.grants.size(), sim.moves(), sim.grants);
        assertThat(sim.even()).as("%s", sim.shares()).isTrue();
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A member whose clock runs 1.5 s ahead (less than a lease): its registrations are stamped
     * in the future, so the others' common anchor moves up to one lease later. Expected: all
     * placed within a lease and two staggers, no two holders (it took 2.5 s, 17 grants, 4 moves).
     */
    @Test
    void aMemberWithAClockAheadDelaysThePlacementByNoMoreThanALease() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD, ROLES, Duration.ofMillis(1500));
        Duration took = sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(4));
        System.out.printf(
                "PLACEMENT clock ahead: placed after %s; shares %s, %d grants, %d moves, grants %s%n",
                took, sim.shares(), sim.grants.size(), sim.moves(), sim.grants);
        assertThat(took)
                .isLessThanOrEqualTo(CONFIG.duration()
                        .plus(CONFIG.challengeStagger().multipliedBy(2))
                        .plus(TICK.multipliedBy(4)));
        assertThat(sim.violations).isEmpty();
    }

    /** As {@link #aMemberWithAClockAheadDelaysThePlacementByNoMoreThanALease}, with c's clock 1.5 s behind. */
    @Test
    void aMemberWithAClockBehindPlacesEveryRoleWithinTheBound() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD, ROLES, Duration.ofMillis(-1500));
        Duration took = sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(4));
        System.out.printf(
                "PLACEMENT clock behind: placed after %s; shares %s, %d grants, %d moves, grants %s; ends %s%n",
                took, sim.shares(), sim.grants.size(), sim.moves(), sim.grants, sim.ends);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * c crashes at the start of an outage and never comes back; its old registrations and its
     * leases (run out) remain. Expected: a and b take all twelve within the bound once the
     * cluster is back, one grant per role, six each, no move afterwards.
     */
    @Test
    void afterAnOutageAMemberThatNeverComesBackLeavesNoRoleUnheld() {
        startThreeEven();
        sim.members.get("c").runtime.freeze();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(CONFIG.duration().multipliedBy(4));
        sim.grants.clear();
        sim.ends.clear();
        long movesBefore = sim.moves();
        outage.forEach(InMemoryCluster.Fault::close);
        long back = sim.runtime.nanoTime();
        sim.runUntil(
                () -> sim.held("a") + sim.held("b") == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runFor(CONFIG.duration().multipliedBy(4));
        System.out.printf(
                "PLACEMENT never back: placed after %s; longest gap %s; shares %s; %d grants; moves %d; grants %s%n",
                took,
                sim.longestGapSince(back),
                sim.shares(),
                sim.grants.size(),
                sim.moves() - movesBefore,
                sim.grants);
        assertThat(sim.held("a") + sim.held("b")).isEqualTo(ROLES.size());
        assertThat(sim.grants).as("each role granted once after the outage").hasSize(ROLES.size());
        assertThat(Math.abs(sim.held("a") - sim.held("b")))
                .as("%s", sim.shares())
                .isLessThanOrEqualTo(1);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * The cluster back while a is still away (frozen) for another 1.2 s, less than a lease:
     * b and c place what they can; a comes back and gets its share. Expected: no two holders,
     * every role held within the bound after the cluster is back, and few extra terms.
     */
    @Test
    void afterAnOutageMembersComingBackAtDifferentTimesPlaceEveryRole() {
        startThreeEven();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(CONFIG.duration().multipliedBy(2));
        sim.members.get("a").runtime.freeze();
        sim.runFor(CONFIG.duration().multipliedBy(2));
        sim.grants.clear();
        long movesBefore = sim.moves();
        outage.forEach(InMemoryCluster.Fault::close);
        long back = sim.runtime.nanoTime();
        sim.runFor(Duration.ofMillis(1200));
        sim.members.get("a").runtime.resume();
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runUntil(sim::even, Duration.ofSeconds(15));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT back at different times: all held after %s; longest gap %s; shares %s; %d grants; moves %d;"
                        + " grants %s%n",
                took,
                sim.longestGapSince(back),
                sim.shares(),
                sim.grants.size(),
                sim.moves() - movesBefore,
                sim.grants);
        assertThat(took).isLessThanOrEqualTo(sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A partial outage: partition 0 (and its roles' coordinators) away for three leases while
     * the other partitions work. Expected: the roles of partition 0 are placed once each when
     * it is back, the shares are 4/4/4 again, and nothing else moves.
     */
    @Test
    void afterAPartialOutageTheLostRolesArePlacedOnceAndNothingMoves() {
        startThreeEven();
        List<Role> lost = ROLES.stream()
                .filter(role -> sim.members.get("a").transport.partition(role).partition() == 0)
                .toList();
        assertThat(lost).isNotEmpty();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0));
        sim.runUntil(() -> sim.withHolder(lost) == 0, CONFIG.duration().multipliedBy(2));
        sim.runFor(CONFIG.duration().multipliedBy(2));
        assertThat(sim.withHolder(ROLES)).isEqualTo(ROLES.size() - lost.size());
        sim.grants.clear();
        long movesBefore = sim.moves();
        outage.forEach(InMemoryCluster.Fault::close);
        long back = sim.runtime.nanoTime();
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runFor(CONFIG.duration().multipliedBy(4));
        System.out.printf(
                "PLACEMENT partial outage (%d roles on p0): placed after %s; shares %s; %d grants; moves %d; grants %s%n",
                lost.size(), took, sim.shares(), sim.grants.size(), sim.moves() - movesBefore, sim.grants);
        assertThat(sim.grants)
                .as("each lost role %s granted once; ends %s", lost, sim.ends)
                .hasSize(lost.size());
        assertThat(sim.shares()).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        assertThat(sim.moves() - movesBefore).as("moves").isZero();
        assertThat(sim.violations).isEmpty();
    }

    /**
     * After an outage the members register again; partition 0's reads are held behind an open
     * transaction for two leases meanwhile, so those registrations are not visible. Expected:
     * no member registers again pass after pass (at most a few registrations per role).
     */
    @Test
    void registrationsHiddenAfterAnOutageDoNotMakeAMemberRegisterOnEveryPass() {
        startThreeEven();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(CONFIG.duration().multipliedBy(4));
        Map<String, Integer> before = registrationCounts();
        InMemoryCluster.Fault hidden = sim.cluster.holdVisibility(new TopicPartition(TOPIC.name(), 0));
        outage.forEach(InMemoryCluster.Fault::close);
        sim.runFor(CONFIG.duration().multipliedBy(2));
        hidden.close();
        sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(3));
        Map<String, Integer> after = registrationCounts();
        Map<String, Integer> written = new LinkedHashMap<>();
        after.forEach((id, count) -> written.put(id, count - before.get(id)));
        System.out.printf(
                "PLACEMENT hidden registrations: written per member %s; shares %s; grants %s%n",
                written, sim.shares(), sim.grants);
        assertThat(written.values())
                .as("%s", written)
                .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3 * ROLES.size()));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A lease that no standby could take in its turn because the role's coordinator was away
     * a little longer than the latest crash turn: the role is then "abandoned" and placed
     * again, although every member was there all along. Expected: still taken within the
     * bound once the coordinator is back, and granted once.
     */
    @Test
    void aRoleWhoseCoordinatorWasAwayJustPastTheLatestTurnIsTakenOnceWithinTheBound() {
        startThreeEven();
        Role role = ROLES.get(0);
        String holder = sim.members.values().stream()
                .filter(m -> m.contenders.get(role).leadership().isPresent())
                .findFirst()
                .orElseThrow()
                .id;
        // The holder crashes and the coordinator of its role is away: no standby can take it in its turn.
        InMemoryCluster.Fault away = sim.cluster.freezeCoordinator(role);
        sim.members.get(holder).runtime.freeze();
        sim.runFor(CONFIG.duration()
                .multipliedBy(2)
                .plus(CONFIG.challengeStagger())
                .plus(Duration.ofMillis(200)));
        sim.grants.clear();
        away.close();
        long back = sim.runtime.nanoTime();
        sim.runUntil(
                () -> sim.withHolder(List.of(role)) == 1,
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT coordinator away past the turn: %s taken after %s; grants %s%n", role, took, sim.grants);
        assertThat(sim.grants.stream().filter(g -> g.role().equals(role)).count())
                .as("%s granted once", role)
                .isEqualTo(1);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * After the outage of SpreadSimulationTest the winner of each role removes the old holder
     * from the roster and marks it silent (Registrations.prune, Balancer.silent), though the
     * old holder is back and registered again. Expected: once placed, every member counts all
     * three alive and a fair share of four (what {@code RoleShare} reports is true).
     */
    @Test
    void afterAnOutageEveryMemberCountsTheOthersAliveAgain() {
        startThreeEven();
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(CONFIG.duration().multipliedBy(4));
        long movesBefore = sim.moves();
        sim.grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);
        sim.runUntil(
                () -> sim.withHolder(ROLES) == ROLES.size(),
                sim.cluster.operationTimeout().plus(HOLDER_WITHIN));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT live after outage: moves before %d, after %d; grants %s%n",
                movesBefore, sim.moves(), sim.grants);
        Map<String, RoleShare> reported = new LinkedHashMap<>();
        sim.members.forEach((id, m) -> reported.put(id, m.client.share(MemberId.of(id))));
        System.out.printf("PLACEMENT live after outage: %s; shares %s%n", reported, sim.shares());
        assertThat(reported.values())
                .allSatisfy(share ->
                        assertThat(share.liveMembers()).as("%s", reported).isEqualTo(3));
        assertThat(sim.violations).isEmpty();
    }

    /**
     * The members paused with the cluster (a site's power event: processes and brokers away
     * together for three leases) and back at the same instant: each member's overdue timers
     * run on its resume while the others already place. Expected: never two holders, all
     * placed within the bound, one grant per role.
     */
    @Test
    void membersPausedWithTheClusterAndBackTogetherPlaceTheRolesOnceWithNoTwoHolders() {
        startThreeEven();
        sim.members.values().forEach(m -> m.runtime.freeze());
        List<InMemoryCluster.Fault> outage = sim.outage(List.of(0, 1, 2));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        sim.grants.clear();
        sim.ends.clear();
        long movesBefore = sim.moves();
        outage.forEach(InMemoryCluster.Fault::close);
        sim.members.values().forEach(m -> m.runtime.resume());
        long back = sim.runtime.nanoTime();
        sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), HOLDER_WITHIN);
        Duration took = Duration.ofNanos(sim.runtime.nanoTime() - back);
        sim.runFor(CONFIG.duration().multipliedBy(3));
        System.out.printf(
                "PLACEMENT paused with the cluster: placed after %s; shares %s; %d grants; %d moves; ends %s%n",
                took, sim.shares(), sim.grants.size(), sim.moves() - movesBefore, sim.ends);
        assertThat(sim.violations).isEmpty();
        assertThat(sim.grants).as("%s", sim.grants).hasSize(ROLES.size());
    }
}

package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static io.krabka.streams.coordination.client.SimulatedMembers.TICK;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.SimulatedMembers.Gap;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Balance#SPREAD} on whole members, started as an application starts them, on one
 * {@link ManualRuntime} ({@link SimulatedMembers}, as {@link MemberSimulationTest} runs
 * them): joins, a crash, a restart, a targeted handover and a member on
 * {@link Balance#NONE} in the roster.
 *
 * <p>Checked after every tick: never two running members believing they hold one role;
 * while the members are steady (no crash being recovered from), no role is without a
 * holder for longer than {@link #HANDOVER_GAP}: a move is a graceful handover, never a
 * lease. The check sees only gaps of a tick (50 ms) or more: it catches a move that
 * degrades into waiting out a lease (2 s), not the few milliseconds a handover takes here.
 */
class SpreadSimulationTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final List<Role> ROLES = SimulatedMembers.roles(12);
    /** A move's gap: the release, the target's wake-up and its InitProducerId, on simulated time; less than a stagger. */
    private static final Duration HANDOVER_GAP = Duration.ofMillis(400);
    /**
     * Once the members are steady: the settle (two renew intervals, 1 s), then one move
     * after another per holder, each a probe and a handover of a few ticks (eight moves
     * took 2.65 s in all when this was written).
     */
    private static final Duration CONVERGE_WITHIN = Duration.ofSeconds(6);

    private final SimulatedMembers sim =
            new SimulatedMembers(TOPIC, ROLES).everyTick(this::noRoleWithoutAHolderPastAHandover);
    /** Whether a leaderless role is a violation past {@link #HANDOVER_GAP} now (not while a crash is recovered from). */
    private boolean steady = true;
    /** Whether every role has had a holder: from then on, a role without one is counted. */
    private boolean placed;

    @AfterEach
    void close() {
        sim.close();
    }

    @Test
    void membersThatJoinOneAfterAnotherConvergeToAnEvenShareByHandoversAlone() {
        sim.start("a", Balance.SPREAD);
        sim.runUntil(() -> sim.held("a") == ROLES.size(), Duration.ofSeconds(10));
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        long joined = sim.runtime.nanoTime();
        Duration took = sim.runUntil(sim::even, CONVERGE_WITHIN);
        assertThat(sim.shares())
                .as("after %s", took)
                .allSatisfy((member, held) -> assertThat(held).isBetween(3, 5));
        // Moves: a gives eight roles; allow a few more for concurrent holders overshooting.
        long moves = sim.moves();
        assertThat(moves).as("moves after the joins").isBetween(7L, 12L);
        assertThat(sim.ends)
                .as("every end while spreading is a release")
                .allMatch(end -> end.cause() == LeadershipEndCause.RELEASED);
        // And they stay there: no move in three leases more.
        sim.runFor(CONFIG.duration().multipliedBy(3));
        long later = sim.moves();
        assertThat(later).as("moves once even").isEqualTo(moves);
        // A member pays for the roles it holds, not for those it is next in line for.
        assertThat(sim.members.values())
                .allSatisfy(m -> assertThat(m.transport.preparedRoles())
                        .as("prepared by %s", m.id)
                        .isEmpty());
        assertThat(sim.violations).isEmpty();
        assertThat(sim.runtime.nanoTime() - joined).isPositive();
    }

    /**
     * Members started together (a rolling start, 200 ms apart) each take their share once:
     * no role is handed over afterwards, and no role is granted twice. Every role has a
     * holder within one stagger of the last registration and one stagger per member after.
     */
    @Test
    void membersStartedTogetherTakeTheirShareOnceWithNoHandover() {
        sim.start("a", Balance.SPREAD);
        sim.runFor(Duration.ofMillis(200));
        sim.start("b", Balance.SPREAD);
        sim.runFor(Duration.ofMillis(200));
        sim.start("c", Balance.SPREAD);
        Duration placing = CONFIG.challengeStagger().multipliedBy(1 + 3).plus(TICK.multipliedBy(4));
        Duration took = sim.runUntil(
                () -> sim.shares().values().stream().mapToInt(Integer::intValue).sum() == ROLES.size(), placing);
        assertThat(sim.shares())
                .as("after %s", took)
                .containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        sim.runFor(CONFIG.duration().multipliedBy(3));
        assertThat(sim.shares()).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        assertThat(sim.moves()).as("moves").isZero();
        assertThat(sim.ends).as("no leadership ended").isEmpty();
        assertThat(sim.violations).isEmpty();
    }

    /**
     * The cluster away for three leases: every lease runs out and no one can take a role
     * over. Once it is back, the members, back too, place the roles once more, one share
     * each, with no handover after: a device sees one new term per role, not three.
     */
    @Test
    void afterAnOutageLongerThanALeaseTheMembersPlaceTheRolesOnceAgain() {
        sim.start("a", Balance.SPREAD);
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        sim.runFor(CONFIG.renewInterval().multipliedBy(3));
        long movesBefore = sim.moves();

        steady = false;
        List<InMemoryCluster.Fault> outage =
                sim.outage(IntStream.range(0, TOPIC.partitions()).boxed().toList());
        sim.runUntil(
                () -> sim.shares().values().stream().mapToInt(Integer::intValue).sum() == 0,
                CONFIG.duration().multipliedBy(2));
        sim.runFor(CONFIG.duration().multipliedBy(2));
        assertThat(sim.ends)
                .as("every leadership ran out")
                .hasSize(ROLES.size())
                .allMatch(end -> end.cause() == LeadershipEndCause.EXPIRED);
        sim.ends.clear();
        sim.grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);

        // Back: the members register again, gather one stagger, and each takes its share in the spread order.
        Duration placing = sim.cluster
                .operationTimeout()
                .plus(CONFIG.challengeStagger().multipliedBy(1 + 3))
                .plus(CONFIG.duration());
        Duration took = sim.runUntil(
                () -> sim.shares().values().stream().mapToInt(Integer::intValue).sum() == ROLES.size(), placing);
        assertThat(sim.shares())
                .as("after %s; grants %s", took, sim.grants)
                .containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        steady = true;
        sim.runFor(CONFIG.duration().multipliedBy(3));
        assertThat(sim.shares()).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        assertThat(sim.moves()).as("moves after the outage").isEqualTo(movesBefore);
        assertThat(sim.grants).as("each role granted once after the outage").hasSize(ROLES.size());
        assertThat(sim.ends).as("no leadership ended after the outage").isEmpty();
        assertThat(sim.violations).isEmpty();
    }

    @Test
    void aCrashedMembersRolesSpreadOverTheOthersAndItGetsItsShareBackByHandoversAfterItRestarts() {
        sim.start("a", Balance.SPREAD);
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        int orphans = sim.held("c");
        List<Role> orphaned =
                ROLES.stream().filter(role -> sim.holds("c", role)).toList();
        steady = false;
        sim.members.get("c").crash();
        // Once c is late with its renewals, the next in line for its roles build their producers, before the leases run
        // out.
        // (Not necessarily for all of them: the spread order moves with the shares, and a standby whose place moved up
        // without news of the role builds its producer at its challenge.)
        long frozenAt = sim.runtime.nanoTime();
        sim.runUntil(() -> prepared("a") + prepared("b") > 0, CONFIG.duration());
        assertThat(sim.held("a") + sim.held("b"))
                .as("prepared before any orphan was taken")
                .isEqualTo(ROLES.size() - orphans);
        assertThat(Duration.ofNanos(sim.runtime.nanoTime() - frozenAt))
                .as("not before c missed a renewal")
                .isGreaterThan(CONFIG.renewInterval());
        // Each orphaned role is taken within a lease and a stagger, or one more (a full standby waits one later).
        Duration failover = CONFIG.duration()
                .plus(CONFIG.challengeStagger().multipliedBy(2))
                .plus(TICK.multipliedBy(4));
        sim.runUntil(() -> sim.held("a") + sim.held("b") == ROLES.size(), failover);
        assertThat(prepared("a") + prepared("b"))
                .as("the producers built ahead became the new holders'")
                .isZero();
        // No lease names c any more, but a member that took one of its expired leases does not count it alive from its
        // registrations: a move to it would wait out a probe.
        List<String> takers = orphaned.stream()
                .map(role -> sim.holds("a", role) ? "a" : "b")
                .distinct()
                .toList();
        assertThat(takers)
                .isNotEmpty()
                .allSatisfy(id -> assertThat(sim.members
                                .get(id)
                                .client
                                .share(MemberId.of(id))
                                .liveMembers())
                        .as("members %s counts alive", id)
                        .isEqualTo(2));
        assertThat(orphans).isPositive();
        sim.runUntil(sim::even, CONVERGE_WITHIN);
        assertThat(sim.shares())
                .containsOnlyKeys("a", "b")
                .allSatisfy((member, held) -> assertThat(held).isBetween(5, 7));

        steady = true;
        sim.ends.clear();
        sim.start("c2", Balance.SPREAD);
        sim.runUntil(sim::even, CONVERGE_WITHIN);
        assertThat(sim.held("c2")).isBetween(3, 5);
        assertThat(sim.ends)
                .as("the restarted member got its share by handovers only")
                .allMatch(end -> end.cause() == LeadershipEndCause.RELEASED);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A standby that last read a role while the shares were different (here: while the
     * first member still held most roles, before the others joined) decides its place in
     * the spread order anew at the lease's deadline. Were it to keep the place of that old
     * read, two standbys could each wait for the other a stagger and then challenge
     * together, and the second InitProducerId would depose the first grant.
     */
    @Test
    void aCrashAfterTheMembersJoinedOneByOneIsTakenOverOnceOnTheSharesAtTheDeadline() {
        List<Role> roles = SimulatedMembers.roles(30);
        SimulatedMembers sim = new SimulatedMembers(TopicSpec.DEFAULTS.withPartitions(6), roles);
        try {
            crashAfterJoins(sim, roles);
        } finally {
            sim.close();
        }
    }

    private static void crashAfterJoins(SimulatedMembers sim, List<Role> roles) {
        sim.start("a", Balance.SPREAD);
        sim.runUntil(() -> sim.held("a") == roles.size(), Duration.ofSeconds(10));
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        // Three leases more: what a standby last read of a role it read while the roles moved.
        sim.runFor(CONFIG.duration().multipliedBy(3));
        List<Role> orphaned =
                roles.stream().filter(role -> sim.holds("c", role)).toList();
        int grantsBefore = sim.grants.size();
        int endsBefore = sim.ends.size();
        sim.members.get("c").crash();
        Duration failover = CONFIG.duration()
                .plus(CONFIG.challengeStagger().multipliedBy(2))
                .plus(TICK.multipliedBy(4));
        Duration took = sim.runUntil(() -> sim.held("a") + sim.held("b") == roles.size(), failover);
        sim.runFor(CONFIG.challengeStagger().multipliedBy(2));

        assertThat(orphaned).isNotEmpty();
        // c renewed each lease within a renew interval before it froze: every lease ran out within one lease of the
        // crash, and each role's first in the spread order took it then, not a stagger later.
        assertThat(took)
                .as("all of c's roles taken")
                .isLessThanOrEqualTo(CONFIG.duration().plus(TICK.multipliedBy(2)));
        assertThat(sim.grants.subList(grantsBefore, sim.grants.size()))
                .as("each of c's roles %s granted once", orphaned)
                .hasSize(orphaned.size());
        assertThat(sim.ends.subList(endsBefore, sim.ends.size()))
                .as("no new holder deposed by another standby")
                .allMatch(end -> end.member().equals("c"));
        assertThat(sim.violations).isEmpty();
    }

    @Test
    void handOverMovesTheRoleToTheNamedStandbyEvenWhenItIsLastInLine() {
        sim.start("a", Balance.NONE);
        sim.runUntil(() -> sim.held("a") == ROLES.size(), Duration.ofSeconds(10));
        sim.start("b", Balance.NONE);
        sim.runFor(Duration.ofSeconds(1));
        sim.start("c", Balance.NONE);
        sim.runFor(Duration.ofSeconds(1));
        // Under NONE the next in line keeps every role's producer ready; the one behind it keeps none.
        assertThat(sim.members.get("b").transport.preparedRoles()).containsExactlyInAnyOrderElementsOf(ROLES);
        assertThat(sim.members.get("c").transport.preparedRoles()).isEmpty();
        Role role = ROLES.get(0);
        Contender holder = sim.members.get("a").contenders.get(role);
        List<HandoverResult> result = new ArrayList<>();
        sim.members.get("a").runtime.workers().execute(() -> result.add(holder.handOver(MemberId.of("c"))));
        sim.runUntil(() -> !result.isEmpty(), Duration.ofSeconds(6));
        assertThat(result).containsExactly(HandoverResult.HANDED_OVER);
        sim.runUntil(() -> sim.holds("c", role), HANDOVER_GAP);
        assertThat(sim.members.get("b").contenders.get(role).leadership()).isEmpty();
        // c holds this role and is behind b for every other: it keeps no producer ready.
        assertThat(sim.members.get("c").transport.preparedRoles()).isEmpty();
        // b, moved behind c, registered again: it is still in line for the role.
        sim.runFor(Duration.ofSeconds(1));
        assertThat(new CoordinationClient(sim.cluster.transport(TOPIC), CONFIG, sim.runtime)
                        .observe(role, Duration.ZERO)
                        .roster())
                .extracting(ranked -> ranked.member().value())
                .contains("b", "c", "a");
        // Not a standby: answered at once, the role stays.
        List<HandoverResult> refused = new ArrayList<>();
        sim.members
                .get("c")
                .runtime
                .workers()
                .execute(() ->
                        refused.add(sim.members.get("c").contenders.get(role).handOver(MemberId.of("nobody"))));
        sim.runUntil(() -> !refused.isEmpty(), Duration.ofSeconds(1));
        assertThat(refused).containsExactly(HandoverResult.NOT_A_STANDBY);
        assertThat(sim.members.get("c").contenders.get(role).leadership()).isPresent();
        assertThat(sim.violations).isEmpty();
    }

    /**
     * Under spread an operator's handover puts the target above its share, and the balancer
     * evens it out again, but with the roles the target held longest: the role just handed
     * to it stays there.
     */
    @Test
    void aRoleHandedOverUnderSpreadStaysWithItsTargetWhileTheSharesEvenOutAgain() {
        sim.start("a", Balance.SPREAD);
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        sim.runFor(CONFIG.renewInterval().multipliedBy(3));
        Role moved =
                ROLES.stream().filter(role -> sim.holds("a", role)).findFirst().orElseThrow();
        long before = sim.moves();
        List<HandoverResult> result = new ArrayList<>();
        SimulatedMembers.Member a = sim.members.get("a");
        a.runtime.workers().execute(() -> result.add(a.contenders.get(moved).handOver(MemberId.of("b"))));
        sim.runUntil(() -> !result.isEmpty() && sim.holds("b", moved), Duration.ofSeconds(6));
        assertThat(result).containsExactly(HandoverResult.HANDED_OVER);

        sim.runUntil(() -> sim.even() && sim.moves() > before, CONVERGE_WITHIN);
        assertThat(sim.members.get("b").contenders.get(moved).leadership())
                .as("%s stays with b: %s", moved, sim.shares())
                .isPresent();
        assertThat(sim.violations).isEmpty();
    }

    /**
     * A member on NONE (or an older version) reads every move as a release and a grant,
     * takes what is handed to it, and never gives a role away: the spread members even
     * out between themselves and hand it roles while it holds two fewer than the giver.
     */
    @Test
    void aMemberOnNoneInTheRosterTakesHandoversAndTheSpreadMembersEvenOutAroundIt() {
        sim.start("a", Balance.SPREAD);
        sim.runUntil(() -> sim.held("a") == ROLES.size(), Duration.ofSeconds(10));
        sim.start("old", Balance.NONE);
        sim.start("b", Balance.SPREAD);
        sim.runUntil(
                () -> sim.held("old") > 0
                        && Math.abs(sim.held("a") - sim.held("b")) <= 1
                        && sim.held("a") < ROLES.size() / 2,
                CONVERGE_WITHIN);
        sim.runFor(CONFIG.duration().multipliedBy(2));
        assertThat(sim.held("a") + sim.held("b") + sim.held("old")).isEqualTo(ROLES.size());
        assertThat(Math.abs(sim.held("a") - sim.held("b")))
                .as("%s", sim.shares())
                .isLessThanOrEqualTo(1);
        assertThat(sim.held("old")).as("%s", sim.shares()).isLessThanOrEqualTo(sim.held("a") + sim.held("b"));
        assertThat(sim.ends).allMatch(end -> end.cause() == LeadershipEndCause.RELEASED);
        assertThat(sim.violations).isEmpty();
    }

    @Test
    void aDrainHandsEachRoleToAMemberThatStays() {
        sim.start("a", Balance.SPREAD);
        sim.start("b", Balance.SPREAD);
        sim.start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        SimulatedMembers.Member leaving = sim.members.get("a");
        int had = sim.held("a");
        sim.stop(List.of(leaving), Duration.ofSeconds(5));
        sim.runUntil(() -> sim.held("b") + sim.held("c") == ROLES.size(), HANDOVER_GAP.multipliedBy(4));
        assertThat(had).isPositive();
        assertThat(Math.abs(sim.held("b") - sim.held("c")))
                .as("the drained roles went to both: %s", sim.shares())
                .isLessThanOrEqualTo(2);
        assertThat(sim.violations).isEmpty();
    }

    /**
     * Each tick: once every role has had a holder and while the members are steady, a role
     * whose holder came back after more than {@link #HANDOVER_GAP} without one is a
     * violation. The first placement is not a handover: each role waits for its turn there
     * ({@link #membersStartedTogetherTakeTheirShareOnceWithNoHandover} bounds it).
     */
    private void noRoleWithoutAHolderPastAHandover() {
        long now = sim.runtime.nanoTime();
        for (int i = sim.gaps.size() - 1; i >= 0 && sim.gaps.get(i).to() == now; i--) {
            Gap gap = sim.gaps.get(i);
            if (placed && steady && gap.length().compareTo(HANDOVER_GAP) > 0) {
                sim.violations.add(
                        "+" + sim.runtime.elapsed() + " " + gap.role() + " had no holder for " + gap.length());
            }
        }
        placed |= sim.withHolder(ROLES) == ROLES.size();
    }

    /** How many roles {@code member} keeps a producer ready for without holding them. */
    private int prepared(String member) {
        return sim.members.get(member).transport.preparedRoles().size();
    }
}

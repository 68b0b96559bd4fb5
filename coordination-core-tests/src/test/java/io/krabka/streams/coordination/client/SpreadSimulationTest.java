package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.ManualRuntime;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Balance#SPREAD} on whole members, started as an application starts them, on one
 * {@link ManualRuntime} (as {@link MemberSimulationTest} runs them): joins, a crash, a
 * restart, a targeted handover and a member on {@link Balance#NONE} in the roster.
 *
 * <p>Checked after every tick: never two running members believing they hold one role;
 * while the members are steady (no crash being recovered from), no role is without a
 * holder for longer than {@link #HANDOVER_GAP}: a move is a graceful handover, never a
 * lease.
 */
class SpreadSimulationTest {

    private static final LeaseConfig CONFIG = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final List<Role> ROLES = IntStream.range(0, 12).mapToObj(i -> Role.of("role-" + i)).toList();
    private static final Duration TICK = Duration.ofMillis(50);
    /** A move's gap: the release, the target's wake-up and its InitProducerId, on simulated time; less than a stagger. */
    private static final Duration HANDOVER_GAP = Duration.ofMillis(400);
    /**
     * Once the members are steady: the settle (two renew intervals, 1 s), then one move
     * after another per holder, each a probe and a handover of a few ticks (eight moves
     * took 2.65 s in all when this was written).
     */
    private static final Duration CONVERGE_WITHIN = Duration.ofSeconds(6);

    private final ManualRuntime runtime = ManualRuntime.builder().clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(2));
    private final Map<String, Member> members = new LinkedHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<String> ends = new CopyOnWriteArrayList<>();
    private final List<String> grants = new CopyOnWriteArrayList<>();
    private final Map<Role, Long> leaderlessSince = new HashMap<>();
    /** Whether a leaderless role is a violation past {@link #HANDOVER_GAP} now (not while a crash is recovered from). */
    private boolean steady = true;
    /** Whether every role has had a holder: from then on, a role without one is counted. */
    private boolean placed;

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void membersThatJoinOneAfterAnotherConvergeToAnEvenShareByHandoversAlone() {
        start("a", Balance.SPREAD);
        runUntil(() -> held("a") == ROLES.size(), Duration.ofSeconds(10));
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        long joined = runtime.nanoTime();
        Duration took = runUntil(this::even, CONVERGE_WITHIN);
        assertThat(shares()).as("after %s", took).allSatisfy((member, held) -> assertThat(held).isBetween(3, 5));
        // Moves: a gives eight roles; allow a few more for concurrent holders overshooting.
        long moves = members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();
        assertThat(moves).as("moves after the joins").isBetween(7L, 12L);
        assertThat(ends).as("every end while spreading is a release").allMatch(end -> end.contains(" RELEASED"));
        // And they stay there: no move in three leases more.
        runFor(CONFIG.duration().multipliedBy(3));
        long later = members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();
        assertThat(later).as("moves once even").isEqualTo(moves);
        // A member pays for the roles it holds, not for those it is next in line for.
        assertThat(members.values()).allSatisfy(m -> assertThat(m.transport.preparedRoles()).as("prepared by %s", m.id).isEmpty());
        assertThat(violations).isEmpty();
        assertThat(runtime.nanoTime() - joined).isPositive();
    }

    /**
     * Members started together (a rolling start, 200 ms apart) each take their share once:
     * no role is handed over afterwards, and no role is granted twice. Every role has a
     * holder within one stagger of the last registration and one stagger per member after.
     */
    @Test
    void membersStartedTogetherTakeTheirShareOnceWithNoHandover() {
        start("a", Balance.SPREAD);
        runFor(Duration.ofMillis(200));
        start("b", Balance.SPREAD);
        runFor(Duration.ofMillis(200));
        start("c", Balance.SPREAD);
        Duration placing = CONFIG.challengeStagger().multipliedBy(1 + 3).plus(TICK.multipliedBy(4));
        Duration took = runUntil(() -> shares().values().stream().mapToInt(Integer::intValue).sum() == ROLES.size(), placing);
        assertThat(shares()).as("after %s", took).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        runFor(CONFIG.duration().multipliedBy(3));
        assertThat(shares()).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        assertThat(members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum())
                .as("moves").isZero();
        assertThat(ends).as("no leadership ended").isEmpty();
        assertThat(violations).isEmpty();
    }

    /**
     * The cluster away for three leases: every lease runs out and no one can take a role
     * over. Once it is back, the members, back too, place the roles once more, one share
     * each, with no handover after: a device sees one new term per role, not three.
     */
    @Test
    void afterAnOutageLongerThanALeaseTheMembersPlaceTheRolesOnceAgain() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        runUntil(this::even, Duration.ofSeconds(30));
        runFor(CONFIG.renewInterval().multipliedBy(3));
        long movesBefore = members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();

        steady = false;
        List<InMemoryCluster.Fault> outage = new ArrayList<>();
        IntStream.range(0, TOPIC.partitions()).forEach(p -> outage.add(cluster.freezePartition(new TopicPartition(TOPIC.name(), p))));
        ROLES.forEach(role -> outage.add(cluster.freezeCoordinator(role)));
        runUntil(() -> shares().values().stream().mapToInt(Integer::intValue).sum() == 0, CONFIG.duration().multipliedBy(2));
        runFor(CONFIG.duration().multipliedBy(2));
        assertThat(ends).as("every leadership ran out").hasSize(ROLES.size()).allMatch(end -> end.endsWith(" EXPIRED"));
        ends.clear();
        grants.clear();
        outage.forEach(InMemoryCluster.Fault::close);

        // Back: the members register again, gather one stagger, and each takes its share in the spread order.
        Duration placing = cluster.operationTimeout().plus(CONFIG.challengeStagger().multipliedBy(1 + 3)).plus(CONFIG.duration());
        Duration took = runUntil(() -> shares().values().stream().mapToInt(Integer::intValue).sum() == ROLES.size(), placing);
        assertThat(shares()).as("after %s; grants %s", took, grants)
                .containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        steady = true;
        runFor(CONFIG.duration().multipliedBy(3));
        assertThat(shares()).containsOnly(Map.entry("a", 4), Map.entry("b", 4), Map.entry("c", 4));
        assertThat(members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum())
                .as("moves after the outage").isEqualTo(movesBefore);
        assertThat(grants).as("each role granted once after the outage").hasSize(ROLES.size());
        assertThat(ends).as("no leadership ended after the outage").isEmpty();
        assertThat(violations).isEmpty();
    }

    @Test
    void aCrashedMembersRolesSpreadOverTheOthersAndItGetsItsShareBackByHandoversAfterItRestarts() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        runUntil(this::even, Duration.ofSeconds(30));
        int orphans = held("c");
        List<Role> orphaned = ROLES.stream().filter(role -> members.get("c").contenders.get(role).leadership().isPresent()).toList();
        steady = false;
        members.get("c").runtime.freeze();
        members.get("c").crashed = true;
        // Once c is late with its renewals, the next in line for its roles build their producers, before the leases run out.
        // (Not necessarily for all of them: the spread order moves with the shares, and a standby whose place moved up
        // without news of the role builds its producer at its challenge.)
        long frozenAt = runtime.nanoTime();
        runUntil(() -> prepared("a") + prepared("b") > 0, CONFIG.duration());
        assertThat(held("a") + held("b")).as("prepared before any orphan was taken").isEqualTo(ROLES.size() - orphans);
        assertThat(Duration.ofNanos(runtime.nanoTime() - frozenAt)).as("not before c missed a renewal")
                .isGreaterThan(CONFIG.renewInterval());
        // Each orphaned role is taken within a lease and a stagger, or one more (a full standby waits one later).
        Duration failover = CONFIG.duration().plus(CONFIG.challengeStagger().multipliedBy(2)).plus(TICK.multipliedBy(4));
        runUntil(() -> held("a") + held("b") == ROLES.size(), failover);
        assertThat(prepared("a") + prepared("b")).as("the producers built ahead became the new holders'").isZero();
        // No lease names c any more, but a member that took one of its expired leases does not count it alive from its
        // registrations: a move to it would wait out a probe.
        List<String> takers = orphaned.stream().map(role -> members.get("a").contenders.get(role).leadership().isPresent() ? "a" : "b")
                .distinct().toList();
        assertThat(takers).isNotEmpty().allSatisfy(id -> assertThat(members.get(id).client.share(MemberId.of(id)).liveMembers())
                .as("members %s counts alive", id).isEqualTo(2));
        assertThat(orphans).isPositive();
        runUntil(this::even, CONVERGE_WITHIN);
        assertThat(shares()).containsOnlyKeys("a", "b").allSatisfy((member, held) -> assertThat(held).isBetween(5, 7));

        steady = true;
        ends.clear();
        start("c2", Balance.SPREAD);
        runUntil(this::even, CONVERGE_WITHIN);
        assertThat(held("c2")).isBetween(3, 5);
        assertThat(ends).as("the restarted member got its share by handovers only").allMatch(end -> end.contains(" RELEASED"));
        assertThat(violations).isEmpty();
    }

    @Test
    void handOverMovesTheRoleToTheNamedStandbyEvenWhenItIsLastInLine() {
        start("a", Balance.NONE);
        runUntil(() -> held("a") == ROLES.size(), Duration.ofSeconds(10));
        start("b", Balance.NONE);
        runFor(Duration.ofSeconds(1));
        start("c", Balance.NONE);
        runFor(Duration.ofSeconds(1));
        // Under NONE the next in line keeps every role's producer ready; the one behind it keeps none.
        assertThat(members.get("b").transport.preparedRoles()).containsExactlyInAnyOrderElementsOf(ROLES);
        assertThat(members.get("c").transport.preparedRoles()).isEmpty();
        Role role = ROLES.get(0);
        Contender holder = members.get("a").contenders.get(role);
        List<HandoverResult> result = new ArrayList<>();
        members.get("a").runtime.workers().execute(() -> result.add(holder.handOver(MemberId.of("c"))));
        runUntil(() -> !result.isEmpty(), Duration.ofSeconds(6));
        assertThat(result).containsExactly(HandoverResult.HANDED_OVER);
        runUntil(() -> members.get("c").contenders.get(role).leadership().isPresent(), HANDOVER_GAP);
        assertThat(members.get("b").contenders.get(role).leadership()).isEmpty();
        // c holds this role and is behind b for every other: it keeps no producer ready.
        assertThat(members.get("c").transport.preparedRoles()).isEmpty();
        // b, moved behind c, registered again: it is still in line for the role.
        runFor(Duration.ofSeconds(1));
        assertThat(new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime).observe(role, Duration.ZERO).roster())
                .extracting(ranked -> ranked.member().value()).contains("b", "c", "a");
        // Not a standby: answered at once, the role stays.
        List<HandoverResult> refused = new ArrayList<>();
        members.get("c").runtime.workers().execute(() -> refused.add(members.get("c").contenders.get(role)
                .handOver(MemberId.of("nobody"))));
        runUntil(() -> !refused.isEmpty(), Duration.ofSeconds(1));
        assertThat(refused).containsExactly(HandoverResult.NOT_A_STANDBY);
        assertThat(members.get("c").contenders.get(role).leadership()).isPresent();
        assertThat(violations).isEmpty();
    }

    /**
     * Under spread an operator's handover puts the target above its share, and the balancer
     * evens it out again, but with the roles the target held longest: the role just handed
     * to it stays there.
     */
    @Test
    void aRoleHandedOverUnderSpreadStaysWithItsTargetWhileTheSharesEvenOutAgain() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        runUntil(this::even, Duration.ofSeconds(30));
        runFor(CONFIG.renewInterval().multipliedBy(3));
        Role moved = ROLES.stream().filter(role -> members.get("a").contenders.get(role).leadership().isPresent()).findFirst()
                .orElseThrow();
        long before = members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();
        List<HandoverResult> result = new ArrayList<>();
        members.get("a").runtime.workers().execute(() -> result.add(members.get("a").contenders.get(moved).handOver(MemberId.of("b"))));
        runUntil(() -> !result.isEmpty() && members.get("b").contenders.get(moved).leadership().isPresent(), Duration.ofSeconds(6));
        assertThat(result).containsExactly(HandoverResult.HANDED_OVER);

        runUntil(() -> even() && members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum()
                > before, CONVERGE_WITHIN);
        assertThat(members.get("b").contenders.get(moved).leadership()).as("%s stays with b: %s", moved, shares()).isPresent();
        assertThat(violations).isEmpty();
    }

    /**
     * A member on NONE (or an older version) reads every move as a release and a grant,
     * takes what is handed to it, and never gives a role away: the spread members even
     * out between themselves and hand it roles while it holds two fewer than the giver.
     */
    @Test
    void aMemberOnNoneInTheRosterTakesHandoversAndTheSpreadMembersEvenOutAroundIt() {
        start("a", Balance.SPREAD);
        runUntil(() -> held("a") == ROLES.size(), Duration.ofSeconds(10));
        start("old", Balance.NONE);
        start("b", Balance.SPREAD);
        runUntil(() -> held("old") > 0 && Math.abs(held("a") - held("b")) <= 1 && held("a") < ROLES.size() / 2,
                CONVERGE_WITHIN);
        runFor(CONFIG.duration().multipliedBy(2));
        assertThat(held("a") + held("b") + held("old")).isEqualTo(ROLES.size());
        assertThat(Math.abs(held("a") - held("b"))).as("%s", shares()).isLessThanOrEqualTo(1);
        assertThat(held("old")).as("%s", shares()).isLessThanOrEqualTo(held("a") + held("b"));
        assertThat(ends).allMatch(end -> end.contains(" RELEASED"));
        assertThat(violations).isEmpty();
    }

    @Test
    void aDrainHandsEachRoleToAMemberThatStays() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        runUntil(this::even, Duration.ofSeconds(30));
        Member leaving = members.get("a");
        int had = held("a");
        leaving.runtime.workers().execute(() -> leaving.contenders.values().forEach(Contender::stop));
        runUntil(() -> leaving.contenders.values().stream().noneMatch(Contender::isRunning), Duration.ofSeconds(5));
        leaving.stopped = true;
        runUntil(() -> held("b") + held("c") == ROLES.size(), HANDOVER_GAP.multipliedBy(4));
        assertThat(had).isPositive();
        assertThat(Math.abs(held("b") - held("c"))).as("the drained roles went to both: %s", shares()).isLessThanOrEqualTo(2);
        assertThat(violations).isEmpty();
    }

    private boolean even() {
        Map<String, Integer> shares = shares();
        int total = shares.values().stream().mapToInt(Integer::intValue).sum();
        if (total != ROLES.size()) {
            return false;
        }
        int min = shares.values().stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = shares.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return max - min <= 1;
    }

    /** Per running member, how many roles it believes it holds. */
    private Map<String, Integer> shares() {
        Map<String, Integer> shares = new LinkedHashMap<>();
        members.values().stream().filter(Member::running).forEach(m -> shares.put(m.id, held(m.id)));
        return shares;
    }

    /** How many roles {@code member} keeps a producer ready for without holding them. */
    private int prepared(String member) {
        return members.get(member).transport.preparedRoles().size();
    }

    private int held(String member) {
        Member m = members.get(member);
        return (int) m.contenders.values().stream().filter(c -> c.leadership().isPresent()).count();
    }

    private Duration runUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            assertThat(Duration.ofNanos(runtime.nanoTime() - start)).as("waiting; shares %s, ends %s", shares(), ends)
                    .isLessThanOrEqualTo(within);
            tick();
        }
        return Duration.ofNanos(runtime.nanoTime() - start);
    }

    private void runFor(Duration duration) {
        long until = runtime.nanoTime() + duration.toNanos();
        while (runtime.nanoTime() < until) {
            tick();
        }
    }

    private void tick() {
        runtime.advance(TICK);
        for (Role role : ROLES) {
            List<String> holding = members.values().stream().filter(Member::running)
                    .filter(m -> m.contenders.get(role).leadership().isPresent()).map(m -> m.id).toList();
            if (holding.size() > 1) {
                violations.add("+" + runtime.elapsed() + " " + holding + " each believe they hold " + role);
            }
            if (!holding.isEmpty()) {
                Long since = leaderlessSince.remove(role);
                if (since != null && steady && runtime.nanoTime() - since > HANDOVER_GAP.toNanos()) {
                    violations.add("+" + runtime.elapsed() + " " + role + " had no holder for "
                            + Duration.ofNanos(runtime.nanoTime() - since));
                }
            } else if (placed) {
                leaderlessSince.putIfAbsent(role, runtime.nanoTime());
            }
        }
        // The first placement is not a handover: each role waits for its turn there
        // (placedOnceByMembersStartedTogether bounds it).
        placed |= ROLES.stream().allMatch(role -> members.values().stream().filter(Member::running)
                .anyMatch(m -> m.contenders.get(role).leadership().isPresent()));
        if (!violations.isEmpty()) {
            throw new AssertionError(violations + "; ends " + ends);
        }
    }

    private void start(String id, Balance balance) {
        Member member = new Member(id, balance);
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
    }

    private final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(SpreadSimulationTest.this.runtime);
        final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        final CoordinationClient client;
        final Map<Role, Contender> contenders = new LinkedHashMap<>();
        boolean crashed;
        boolean stopped;
        volatile boolean everHeld;

        Member(String id, Balance balance) {
            this.id = id;
            this.client = new CoordinationClient(transport, CONFIG, runtime).balance(balance);
            for (Role role : ROLES) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        everHeld = true;
                        grants.add("+" + SpreadSimulationTest.this.runtime.elapsed() + " " + id + " " + role);
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add("+" + SpreadSimulationTest.this.runtime.elapsed() + " " + id + " " + role + " " + cause);
                    }
                }));
            }
        }

        boolean running() {
            return !crashed && !stopped && !runtime.frozen;
        }
    }
}

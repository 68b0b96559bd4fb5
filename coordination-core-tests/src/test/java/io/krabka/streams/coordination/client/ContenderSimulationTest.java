package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole failovers of real {@link Contender}s on the in-memory cluster under a
 * {@link ManualClock}, in the manner of Kafka's {@code RaftEventSimulationTest}: each
 * step advances the clock and runs one pass of every live member's state machine, and
 * the invariants are checked after every pass. Members crash, pause (a GC pause or
 * SIGSTOP: no pass for a while, then they go on as if nothing happened), restart and
 * release, as a seeded random plan says.
 */
@Execution(ExecutionMode.CONCURRENT)
class ContenderSimulationTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final LeaseConfig CONFIG = LeaseConfig.DEFAULTS; // 30 s lease, 10 s renew, 5 s stagger
    private static final Duration STEP = Duration.ofMillis(250);
    private static final int MEMBERS = 4;
    private static final Duration MAX_SKEW = Duration.ofSeconds(25);

    /** The timings of this test's members: the defaults unless a test says otherwise before it builds them. */
    private LeaseConfig config = CONFIG;

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    /** Every grant in the order it happened, across all members: (member, term). */
    private final List<Grant> grants = new ArrayList<>();

    private record Grant(String member, long term, Instant at) {}

    @Test
    void holderDiesAndRankZeroWinsJustAfterTheDeadline() {
        Simulation sim = new Simulation("a", "b", "c");
        sim.runFor(Duration.ofSeconds(1));
        assertThat(sim.holders()).containsExactly("a");
        Instant deadline = sim.crash("a");

        Instant granted = sim.runUntilHeldBy("b", Duration.ofMinutes(2));
        assertThat(granted).isBetween(deadline, deadline.plus(STEP));
        assertThat(grants).extracting(Grant::member).containsExactly("a", "b");
    }

    @Test
    void rankZeroAlsoDeadSoRankOneWinsOneStaggerLater() {
        Simulation sim = new Simulation("a", "b", "c");
        sim.runFor(Duration.ofSeconds(1));
        Instant deadline = sim.crash("a");
        sim.crash("b");

        Instant granted = sim.runUntilHeldBy("c", Duration.ofMinutes(2));
        Instant oneStaggerLater = deadline.plus(CONFIG.challengeStagger());
        assertThat(granted).isBetween(oneStaggerLater, oneStaggerLater.plus(STEP));
    }

    @Test
    void recoveredNodeLandsAtTheTailAndDoesNotFailBack() {
        Simulation sim = new Simulation("a", "b", "c");
        sim.runFor(Duration.ofSeconds(1));
        sim.crash("a");
        sim.runUntilHeldBy("b", Duration.ofMinutes(2));
        sim.restart("a");
        sim.runFor(Duration.ofMinutes(5));

        assertThat(sim.holders()).containsExactly("b");
        assertThat(sim.roster()).containsExactly("b", "c", "a");
        assertThat(grants).extracting(Grant::member).containsExactly("a", "b");
    }

    @Test
    void aReleaseHandsTheRoleToRankZeroAtOnceAndTheReleaserRejoinsAtTheTail() {
        Simulation sim = new Simulation("a", "b", "c");
        sim.runFor(Duration.ofSeconds(1));
        assertThat(sim.members.get("a").contender.release()).isTrue();
        sim.step();

        assertThat(sim.holders()).containsExactly("b");
        assertThat(sim.members.get("a").ends).containsExactly(LeadershipEndCause.RELEASED);
        sim.runFor(Duration.ofSeconds(1));
        assertThat(sim.roster()).containsExactly("b", "c", "a");
    }

    @Test
    void aHolderPausedPastItsLeaseLearnsItEndedOnItsFirstPassAndNeverOverlapsTheNewHolder() {
        Simulation sim = new Simulation("a", "b");
        sim.runFor(Duration.ofSeconds(1));
        sim.pause("a");
        sim.runUntilHeldBy("b", Duration.ofMinutes(2));
        sim.resume("a");
        sim.step();

        assertThat(sim.holders()).containsExactly("b");
        assertThat(sim.members.get("a").ends).containsExactly(LeadershipEndCause.EXPIRED);
    }

    /**
     * The storm the fault harness saw on real brokers: grants stay invisible to
     * {@code read_committed} for many leases (another role's transaction open on the
     * partition, or slow commit markers), so every standby whose turn comes finds the dead
     * holder's lease and challenges, fencing the grant in flight, and each fenced new
     * holder challenges again on its next pass. With the coordinator asked first, a
     * challenge in flight counts as a lease, and every move of the invisible holder's
     * transactions as a renewal.
     */
    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {1, 2})
    void grantsInvisibleForManyLeasesAreNotChallengedOverAndOver(short transactionVersion) {
        config = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
        cluster.setTransactionVersion(transactionVersion);
        Simulation sim = new Simulation("a", "b", "c", "d");
        sim.checkHolderIsNewest = false;
        sim.runFor(Duration.ofSeconds(1));
        assertThat(sim.holders()).containsExactly("a");
        cluster.delayVisibility(Duration.ofSeconds(30));
        sim.crash("a");
        int before = grants.size();
        sim.runFor(Duration.ofSeconds(30));
        int during = grants.size() - before;

        // The first challenge only: the holder's renewals move what the coordinator reports (its
        // epoch under version 2, its transactions' start under version 1) and keep everyone off.
        int bound = 1;
        assertThat(during).as("grants in 30 s while grants are invisible").isEqualTo(bound);
        // The held-back records show, 30 s late: a standby that finds a lease long past its
        // deadline asks the coordinator first, and the holder's renewals explain nothing it sees.
        cluster.delayVisibility(Duration.ZERO);
        int delayed = grants.size();
        sim.runFor(Duration.ofSeconds(31));
        assertThat(grants.size() - delayed)
                .as("grants while the held-back records show")
                .isLessThanOrEqualTo(bound);
        assertThat(sim.holders()).hasSize(1);
        int settled = grants.size();
        sim.runFor(config.duration().multipliedBy(3));
        assertThat(grants)
                .as("the holder keeps the role for three leases once records show")
                .hasSize(settled);
    }

    /**
     * 500 by default ({@code -Dsim.contender.seeds=N}): whole started members
     * ({@link MemberSimulationTest}, 2 000 seeds) cover its crashes, pauses, restarts and
     * releases on several roles; what only this one covers is clock skew.
     */
    static LongStream seeds() {
        return SimulatedMembers.seeds("sim.contender.seed", "sim.contender.seeds", 500);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomCrashesPausesRestartsReleasesAndSkewKeepTermsRisingOneHolderAndGapsBounded(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        // Odd seeds skew every member's clock by up to MAX_SKEW either way: past the
        // lease minus the renew interval, so standbys with fast clocks challenge live
        // holders, which must learn at once that they were fenced.
        Simulation sim = new Simulation(seed % 2 == 1 ? random : null, "a", "b", "c", "d");
        Instant lastHeld = clock.instant();
        // A lease, a stagger for each roster entry that may stand ahead (dead ones
        // included), two steps (the first pass after the instant, and the grant's), and
        // the skew between a holder's clock and a standby's.
        Duration bound = CONFIG.duration()
                .plus(CONFIG.challengeStagger().multipliedBy(MEMBERS - 1))
                .plus(STEP.multipliedBy(2))
                .plus(seed % 2 == 1 ? MAX_SKEW.multipliedBy(2) : Duration.ZERO);
        for (int step = 0; step < 2_000; step++) {
            int fault = random.nextInt(400);
            List<String> running = sim.running();
            if (fault == 0 && running.size() > 1) {
                sim.crash(running.get(random.nextInt(running.size())));
            } else if (fault == 1) {
                sim.notRunning().stream().findFirst().ifPresent(sim::restart);
            } else if (fault == 2 && running.size() > 1) {
                sim.pause(running.get(random.nextInt(running.size())));
            } else if (fault == 3) {
                sim.paused().stream().findFirst().ifPresent(sim::resume);
            } else if (fault == 4) {
                sim.holders().stream()
                        .findFirst()
                        .ifPresent(holder -> sim.members.get(holder).contender.release());
            }
            sim.step();
            if (!sim.holders().isEmpty()) {
                lastHeld = clock.instant();
            }
            assertThat(Duration.between(lastHeld, clock.instant()))
                    .as("seed %d step %d: leaderless gap", seed, step)
                    .isLessThanOrEqualTo(bound);
        }
        assertThat(grants.size()).as("seed %d: grants", seed).isGreaterThan(1);
    }

    /** Members on one in-memory cluster, stepped one pass each per step. */
    private final class Simulation {
        final Map<String, Member> members = new LinkedHashMap<>();
        final Map<String, Duration> skews = new LinkedHashMap<>();
        /**
         * Whether a member that believes it holds the role must hold the newest grant after
         * every pass. When grants can be invisible it cannot know at once: then it must
         * learn within a renew interval (its next write is fenced).
         */
        boolean checkHolderIsNewest = true;

        Simulation(String... ids) {
            this(null, ids);
        }

        /** Members whose clocks are skewed at random, when {@code skew} is not null. */
        Simulation(SplittableRandom skew, String... ids) {
            for (String id : ids) {
                skews.put(
                        id,
                        skew == null
                                ? Duration.ZERO
                                : Duration.ofMillis(skew.nextLong(-MAX_SKEW.toMillis(), MAX_SKEW.toMillis() + 1)));
                members.put(id, new Member(id, skews.get(id)));
            }
        }

        /**
         * One instant: the clock moves, then every running member makes one pass. After
         * each pass: a member that believes it holds the role holds the newest grant
         * (it learned of any later one in this pass), and terms only ever rise.
         */
        void step() {
            clock.advance(STEP);
            for (Member member : members.values()) {
                if (!member.running()) {
                    continue;
                }
                member.contender.step();
                member.contender.leadership().ifPresent(held -> {
                    Grant newest = grants.get(grants.size() - 1);
                    if (checkHolderIsNewest || held.term() == newest.term()) {
                        assertThat(held.term())
                                .as(
                                        "%s believes it holds term %d, but %s was granted term %d",
                                        member.id, held.term(), newest.member(), newest.term())
                                .isEqualTo(newest.term());
                        return;
                    }
                    assertThat(Duration.between(newest.at(), clock.instant()))
                            .as(
                                    "%s still believes it holds term %d after %s was granted term %d",
                                    member.id, held.term(), newest.member(), newest.term())
                            .isLessThanOrEqualTo(config.renewInterval().plus(STEP.multipliedBy(2)));
                });
            }
        }

        void runFor(Duration duration) {
            Instant end = clock.instant().plus(duration);
            while (clock.instant().isBefore(end)) {
                step();
            }
        }

        Instant runUntilHeldBy(String id, Duration limit) {
            Instant end = clock.instant().plus(limit);
            while (!holders().equals(List.of(id))) {
                assertThat(clock.instant())
                        .as("%s granted within %s", id, limit)
                        .isBefore(end);
                step();
            }
            return clock.instant();
        }

        /** Kills a member: it never makes another pass. Returns its lease's deadline, if it held the role. */
        Instant crash(String id) {
            Member member = members.get(id);
            member.crashed = true;
            return member.contender.leadership().map(Leadership::deadline).orElse(clock.instant());
        }

        void pause(String id) {
            members.get(id).paused = true;
        }

        void resume(String id) {
            members.get(id).paused = false;
        }

        /** A new process of a crashed member: a new transport and contender, the same id. */
        void restart(String id) {
            members.put(id, new Member(id, skews.get(id)));
        }

        /** Running members that believe they hold the role. */
        List<String> holders() {
            return members.values().stream()
                    .filter(m -> m.running() && m.contender.leadership().isPresent())
                    .map(m -> m.id)
                    .toList();
        }

        List<String> running() {
            return members.values().stream()
                    .filter(Member::running)
                    .map(m -> m.id)
                    .toList();
        }

        List<String> notRunning() {
            return members.values().stream()
                    .filter(m -> m.crashed)
                    .map(m -> m.id)
                    .toList();
        }

        List<String> paused() {
            return members.values().stream()
                    .filter(m -> m.paused && !m.crashed)
                    .map(m -> m.id)
                    .toList();
        }

        List<String> roster() {
            CoordinationClient reader = new CoordinationClient(cluster.transport(TOPIC), CONFIG, clock);
            return reader.observe(ROLE, Duration.ZERO).roster().stream()
                    .map(RankedMember::member)
                    .map(MemberId::value)
                    .toList();
        }
    }

    private final class Member implements Contender.Listener {
        final String id;
        final Contender contender;
        final List<LeadershipEndCause> ends = new ArrayList<>();
        boolean crashed;
        boolean paused;

        Member(String id, Duration skew) {
            this.id = id;
            InstantSource memberClock = () -> clock.instant().plus(skew);
            CoordinationClient client = new CoordinationClient(cluster.transport(TOPIC), config, memberClock);
            // Listeners run inline: the simulation stays on one thread and deterministic.
            this.contender = new Contender(client, ROLE, MemberId.of(id), this, Runnable::run);
        }

        boolean running() {
            return !crashed && !paused;
        }

        @Override
        public void granted(Leadership leadership) {
            if (!grants.isEmpty()) {
                Grant previous = grants.get(grants.size() - 1);
                assertThat(leadership.term())
                        .as("%s's grant after %s's", id, previous.member())
                        .isGreaterThan(previous.term());
            }
            grants.add(new Grant(id, leadership.term(), clock.instant()));
        }

        @Override
        public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
            ends.add(cause);
        }
    }
}

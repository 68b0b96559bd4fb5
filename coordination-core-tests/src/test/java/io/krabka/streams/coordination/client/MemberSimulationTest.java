package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.SimulatedMembers.Grant;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whole members, started as an application starts them, on one {@link ManualRuntime}
 * ({@link SimulatedMembers}): their passes, news wake-ups, renewal scheduling, expiry
 * timers, rejoin pauses, releases and listener callbacks all run as in production, only
 * on simulated time and one thread at a time, so a seed replays exactly. Several members contend for several roles that
 * share partitions, while a seeded plan pauses members (a GC pause or SIGSTOP: nothing of
 * theirs runs), crashes and restarts them, releases roles, and injects cluster faults:
 * commit markers that keep records invisible, a partition stuck behind an open
 * transaction, a frozen transaction coordinator, a dead partition leader (calls block
 * until their timeout), slow InitProducerIds, stalled watchers (news held, nothing vouched).
 *
 * <p>Checked after every tick: no member believes it holds a role longer than a lease
 * past another member's later grant; a deposed holder never commits after a newer
 * leadership's grant (read from the log, the broker's view); no storm (grants per role
 * per lease bounded). Once the faults stop: every role has one holder within a lease plus
 * the capped stagger plus a stated slack, and keeps it for three leases.
 *
 * <p>2 000 seeds by default ({@code -Dsim.seeds=N} sets how many); a failing seed prints
 * the one command that replays it ({@code -Dsim.seed=N}).
 */
@Execution(ExecutionMode.CONCURRENT)
class MemberSimulationTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(2);
    private static final List<Role> ROLES = SimulatedMembers.roles(4);
    private static final List<String> MEMBERS = List.of("a", "b", "c");
    private static final Duration FAULTS_FOR = Duration.ofSeconds(20);

    private final SimulatedMembers sim = new SimulatedMembers(TOPIC, ROLES).underFaults(MEMBERS.size());
    private Balance balance = Balance.NONE;

    @AfterEach
    void close() {
        sim.close();
    }

    static LongStream seeds() {
        return SimulatedMembers.seeds("sim.seed", "sim.seeds", 2_000);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void startedMembersUnderFaultsKeepOneWriterAndSettleToOneLastingHolderPerRole(long seed) {
        SimulatedMembers.replayable(
                "MemberSimulationTest#startedMembersUnderFaultsKeepOneWriterAndSettleToOneLastingHolderPerRole",
                "sim.seed",
                seed,
                () -> simulate(seed));
    }

    private void simulate(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        sim.cluster.setTransactionVersion(seed % 3 == 0 ? (short) 1 : (short) 2);
        // Every other seed spreads the roles: moves by handover join the faults, and every check holds the same.
        balance = seed % 2 == 1 ? Balance.SPREAD : Balance.NONE;
        sim.context(() -> "seed " + seed + " (" + balance + ", transaction version " + (seed % 3 == 0 ? 1 : 2) + ")");
        MEMBERS.forEach(this::startMember);
        List<InMemoryCluster.Fault> faults = new ArrayList<>();
        long faultsEnd = sim.runtime.nanoTime() + FAULTS_FOR.toNanos();
        while (sim.runtime.nanoTime() < faultsEnd) {
            if (random.nextInt(20) == 0) {
                inject(random, faults);
            }
            sim.tick();
        }
        // Everything heals: cluster faults end, paused members go on, crashed ones restart.
        faults.forEach(InMemoryCluster.Fault::close);
        sim.cluster.delayVisibility(Duration.ZERO);
        // A crashed process stays dead; its member comes back as a new one.
        sim.members.values().stream().filter(member -> !member.crashed).forEach(member -> member.runtime.resume());
        new ArrayList<>(sim.members.keySet())
                .stream().filter(id -> sim.members.get(id).crashed).forEach(this::startMember);

        long healed = sim.runtime.nanoTime();
        // A lease, the capped stagger and slack; under spread also the moves that even the shares out.
        Duration bound = sim.settleWithin(balance);
        long settleBy = healed + bound.toNanos();
        sim.runTo(settleBy + CONFIG.duration().multipliedBy(3).toNanos());
        for (Role role : ROLES) {
            List<Grant> ofRole =
                    sim.grants.stream().filter(g -> g.role().equals(role)).toList();
            // The newest grant: a paused member's callbacks run late, so the list is not in term order.
            Grant last =
                    ofRole.stream().max(Comparator.comparingLong(Grant::term)).orElseThrow();
            // Built only when a check fails: each role's reading of the whole log (describeRoles) cost
            // about a fifth of a passing seed's CPU when it was built for every role of every seed.
            Supplier<String> context = () -> "seed " + seed + ", " + role + ": healed at +"
                    + Duration.ofNanos(healed - ManualRuntime.TICKER_START) + "; last grant " + last + "; holders now "
                    + holdersOfAll() + "; ends " + sim.ends + sim.describe() + sim.describeRoles();
            assertThat(last.atNanos())
                    .as(() -> "a lasting holder within " + bound + " of the faults ending; " + context.get())
                    .isLessThanOrEqualTo(settleBy);
            assertThat(sim.holders(role))
                    .as(() -> "one holder, the last granted, three leases later; " + context.get())
                    .containsExactly(last.member());
            assertThat(sim.members
                            .get(last.member())
                            .contenders
                            .get(role)
                            .leadership()
                            .orElseThrow()
                            .term())
                    .as(context)
                    .isEqualTo(last.term());
        }
        assertThat(sim.violations).as("seed %d", seed).isEmpty();
        sim.checkTheLogHasOneWriterAtATime("seed " + seed);
        assertThat(sim.grants).as("seed %d: grants", seed).isNotEmpty();
    }

    /** The same harness catches a member that never learns it was deposed: a control for the overlap check. */
    @Test
    void theOverlapCheckCatchesAHolderThatGoesOnBelievingPastAnotherGrant() {
        sim.failSlowly();
        startMember("a");
        startMember("b");
        while (sim.holders(ROLES.get(0)).isEmpty()) {
            sim.tick();
        }
        String first = sim.holders(ROLES.get(0)).get(0);
        // Its timers and renewals never run again, but it stays "running" to the check, as a
        // member whose expiry timer were broken would.
        sim.members.get(first).runtime.freeze();
        sim.members.get(first).pretendRunning = true;
        long start = sim.runtime.nanoTime();
        while (sim.violations.isEmpty()
                && sim.runtime.nanoTime() - start < Duration.ofSeconds(20).toNanos()) {
            sim.tick();
        }
        assertThat(sim.violations).first().asString().contains("believes it holds");
    }

    private void inject(SplittableRandom random, List<InMemoryCluster.Fault> faults) {
        List<String> running = sim.members.keySet().stream()
                .filter(id -> sim.members.get(id).running())
                .toList();
        Role role = ROLES.get(random.nextInt(ROLES.size()));
        switch (random.nextInt(10)) {
            case 0 -> {
                if (running.size() > 1) {
                    sim.members
                            .get(running.get(random.nextInt(running.size())))
                            .runtime
                            .freeze();
                }
            }
            case 1 ->
                sim.members.values().stream()
                        .filter(m -> m.runtime.frozen && !m.crashed)
                        .findFirst()
                        .ifPresent(m -> m.runtime.resume());
            case 2 -> {
                if (running.size() > 1) {
                    sim.members.get(running.get(random.nextInt(running.size()))).crash();
                }
            }
            case 3 ->
                sim.members.keySet().stream()
                        .filter(id -> sim.members.get(id).crashed)
                        .findFirst()
                        .ifPresent(this::startMember);
            // An operator's release runs on a thread of the member, not on the simulation's driver.
            // It waits for a renewal under way (one producer per role): only while no cluster
            // fault can block that renewal, since the simulation cannot model a thread waiting
            // on a monitor that a sleeping task holds.
            case 4 -> {
                if (faults.isEmpty()) {
                    running.stream()
                            .map(sim.members::get)
                            .forEach(m -> m.runtime
                                    .workers()
                                    .execute(() -> m.contenders.get(role).release()));
                }
            }
            case 5 -> sim.cluster.delayVisibility(Duration.ofMillis(random.nextLong(0, 5_000)));
            case 6 -> faults.add(sim.cluster.freezeCoordinator(role));
            case 7 ->
                faults.add(sim.cluster.freezePartition(
                        new TopicPartition(TOPIC.name(), random.nextInt(TOPIC.partitions()))));
            // The watchers' consumer failed a poll: no news and no vouching until its back-off ends.
            case 8 -> faults.add(sim.cluster.stallWatchers());
            default -> faults.add(sim.cluster.slowInitProducerId(role, Duration.ofMillis(random.nextLong(0, 3_000))));
        }
        // Faults last a while, then end by themselves.
        if (!faults.isEmpty() && random.nextInt(3) == 0) {
            faults.remove(random.nextInt(faults.size())).close();
        }
    }

    private Map<Role, String> holdersOfAll() {
        Map<Role, String> holders = new LinkedHashMap<>();
        ROLES.forEach(role -> holders.put(role, String.join(",", sim.holders(role))));
        return holders;
    }

    /** A new process of member {@code id}: a transport, a client and a started contender per role. */
    private void startMember(String id) {
        sim.start(id, balance, ROLES);
    }
}

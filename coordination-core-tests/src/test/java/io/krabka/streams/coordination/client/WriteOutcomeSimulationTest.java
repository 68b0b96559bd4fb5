package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.ManualRuntime;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.WriteOutcomes.Outcome;
import io.krabka.streams.coordination.client.internal.Handover;
import io.krabka.streams.coordination.memory.InMemoryCluster.LostCommit;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whether what a guarded write reports is true, checked against the log (issue 36, item
 * 5): whole members on one {@link ManualRuntime}, as {@link MemberSimulationTest} runs
 * them, each leadership writing uniquely numbered commands (one or two writers, every 100
 * to 300 ms, on the member's workers) while a seeded plan injects the faults that make a
 * write's outcome hard to tell, and combines them: commit answers lost (the commit
 * applied, aborted or still pending; its sends acknowledged or not; a challenger's
 * InitProducerId landing before the holder looks), a role's partition held behind another
 * transaction left open (the last stable offset stuck), visibility delayed, a challenger's
 * InitProducerId from a process that never writes, transient failures (describes,
 * transactions) just before a crash, producers that reconnect, pauses, crashes, restarts,
 * releases, and on some seeds listeners whose {@code renewed} throws an {@link Error}.
 * Every other seed spreads the roles ({@link Balance#SPREAD}) over members that contend for
 * different sets of roles; the others have equal sets and no balance.
 *
 * <p>Only faults that never leave a task sleeping while it holds a Java monitor: a manual
 * runtime cannot run a thread that blocks on one (a guarded write waits on its
 * leadership's lock), so no frozen coordinator, dead partition or latency here
 * ({@link MemberSimulationTest} has those, without writers). {@link FlakyTransport} injects
 * the member-side faults; {@link WriteOutcomes} records and checks the writes.
 *
 * <p>Checked after every tick: no running member believes it holds a role past its lease's
 * deadline, nor two for longer than a lease; no storm of grants. Once the faults stop: one lasting holder per
 * role within a lease plus the capped stagger plus a stated slack, and under spread no
 * move once the shares settled. Then the member holding the most roles has describes fail
 * for a while, and crashes once each of its roles wrote again: each has a new holder within
 * a lease and the stagger of the standbys ahead. At the end every member stops (each
 * contender stopped, its roles released with a tombstone, no producer kept), and the log
 * is read: {@link WriteOutcomes#violations()} must be empty, no task may have thrown, and
 * per role and producer id lease epochs never go back.
 *
 * <p>After the stop, no client keeps any per-role state ({@code CoordinationClient.roleEntries}).
 *
 * <p>A failing seed prints the command that replays it ({@code -Dsim.outcome.seed=N});
 * {@code -Dsim.outcome.seeds=N} sets how many run (120 by default: about 20 s on two cores).
 */
@Execution(ExecutionMode.CONCURRENT)
class WriteOutcomeSimulationTest {

    private static final LeaseConfig CONFIG = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final List<Role> ROLES = IntStream.range(0, 6).mapToObj(i -> Role.of("role-" + i)).toList();
    private static final List<String> MEMBERS = List.of("a", "b", "c");
    private static final String COMMANDS = "commands";
    private static final int COMMAND_PARTITIONS = 2;
    private static final Duration TICK = Duration.ofMillis(50);
    private static final Duration FAULTS_FOR = Duration.ofSeconds(20);
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);
    /** As {@link MemberSimulationTest}'s: a late call, a standby's one-second pass, the one-second rejoin pause. */
    private static final Duration SETTLE_SLACK = Duration.ofSeconds(5);
    /** Under spread, after the settle: two renew intervals, a probe's timeout, half a second per role's move. */
    private static final Duration SPREAD_SLACK = CONFIG.renewInterval().multipliedBy(2).plus(Handover.PROBE_TIMEOUT)
            .plus(Duration.ofMillis(500).multipliedBy(ROLES.size()));
    /** As {@link MemberSimulationTest}'s: each member at most twice a lease. */
    private static final int MAX_GRANTS_PER_LEASE = 2 * MEMBERS.size();
    /**
     * From a holder's crash to its standby's grant: its last lease, the stagger of the
     * standbys ahead (two at most), and the scheduling slack of passes on the manual
     * runtime ({@link ConservativeLeaseCrashTest}'s). A lease more is the extra lease of
     * issue 36, finding 5.
     */
    private static final Duration TAKEOVER_BOUND = CONFIG.duration().plus(CONFIG.challengeStagger().multipliedBy(2))
            .plus(Duration.ofMillis(500));
    private static final String METHOD = "everyWriteIsInTheLogExactlyAsItsOutcomeSays";

    /** Per outcome, over every seed of the run: printed at the end. */
    private static final Map<String, LongAdder> TOTALS = new ConcurrentHashMap<>();
    /** The longest takeover after a crash, over every seed of the run, in milliseconds. */
    private static final LongAccumulator LONGEST_TAKEOVER = new LongAccumulator(Math::max, 0);

    private final ManualRuntime runtime = ManualRuntime.builder().clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(OPERATION_TIMEOUT);
    /** Another process's transport: it challenges (InitProducerId) and never writes. */
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final Map<String, Member> members = new LinkedHashMap<>();
    private final Map<String, List<Role>> roleSets = new LinkedHashMap<>();
    private final List<Grant> grants = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<String> ends = new CopyOnWriteArrayList<>();
    private final List<String> taskFailures = new CopyOnWriteArrayList<>();
    private final Map<Role, Long> overlapSince = new HashMap<>();
    private final WriteOutcomes writes = new WriteOutcomes(cluster, COMMANDS);
    /** Roles whose next commit was made to lose its answer, until a member's commit of the role did. */
    private final Set<Role> lostArmed = ConcurrentHashMap.newKeySet();
    private final List<InMemoryCluster.Fault> faults = new ArrayList<>();
    /** Members due to crash (a transient failure just before), and when. */
    private final Map<Member, Long> crashAt = new LinkedHashMap<>();
    private Balance balance = Balance.NONE;
    /** Where each new process's own randomness (its writers' pace, its listener's errors) comes from. */
    private SplittableRandom processRandoms = new SplittableRandom(0);
    /** How often a listener's {@code renewed} throws an Error: one in this many (0: never). */
    private int renewedThrowsOneIn;
    /** The seed's settings, for failure messages. */
    private String setup = "";

    private record Grant(Role role, String member, long term, long atNanos) {
    }

    @AfterEach
    void close() {
        runtime.close();
    }

    @AfterAll
    static void printTotals() {
        if (!TOTALS.isEmpty()) {
            System.out.println("WriteOutcomeSimulationTest totals: " + new java.util.TreeMap<>(TOTALS) + "; longest takeover "
                    + LONGEST_TAKEOVER.get() + " ms");
        }
    }

    static LongStream seeds() {
        Long one = Long.getLong("sim.outcome.seed");
        return one != null ? LongStream.of(one) : LongStream.range(0, Long.getLong("sim.outcome.seeds", 120));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyWriteIsInTheLogExactlyAsItsOutcomeSays(long seed) {
        try {
            simulate(seed);
        } catch (Throwable failure) {
            throw new AssertionError("seed " + seed + " failed; replay it with:\n  ./mvnw -B -o -pl coordination-core,"
                    + "coordination-test,coordination-core-tests test -Dsurefire.failIfNoSpecifiedTests=false"
                    + " -Dtest='WriteOutcomeSimulationTest#" + METHOD + "' -Dsim.outcome.seed=" + seed + "\n"
                    + failure.getMessage(), failure);
        }
    }

    private void simulate(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        runtime.onTaskFailure((task, failure) -> taskFailures.add("+" + runtime.elapsed() + " " + task + " threw " + failure));
        cluster.setTransactionVersion(seed % 3 == 0 ? (short) 1 : (short) 2);
        cluster.createTopic(COMMANDS, COMMAND_PARTITIONS);
        // Every other seed spreads the roles, over members with different sets of them.
        balance = seed % 2 == 1 ? Balance.SPREAD : Balance.NONE;
        roleSets.putAll(balance == Balance.SPREAD ? differentRoleSets(random) : equalRoleSets());
        renewedThrowsOneIn = random.nextInt(3) == 0 ? 2 + random.nextInt(6) : 0;
        processRandoms = random.split();
        MEMBERS.forEach(this::startMember);

        setup = "seed " + seed + " (" + balance + ", role sets " + roleSets + ", transaction version "
                + (seed % 3 == 0 ? 1 : 2) + ", renewed throws " + (renewedThrowsOneIn > 0 ? "1 in " + renewedThrowsOneIn : "never")
                + ")";
        long faultsEnd = runtime.nanoTime() + FAULTS_FOR.toNanos();
        while (runtime.nanoTime() < faultsEnd) {
            crashWhenDue();
            if (random.nextInt(12) == 0) {
                inject(random);
            }
            tick();
        }
        heal();
        long healed = runtime.nanoTime();
        Duration bound = CONFIG.duration().plus(CONFIG.duration()).plus(SETTLE_SLACK);
        if (balance == Balance.SPREAD) {
            bound = bound.plus(SPREAD_SLACK);
        }
        long settleBy = healed + bound.toNanos();
        runUntil(settleBy);
        long movesSettled = movesOut();
        runUntil(settleBy + CONFIG.duration().multipliedBy(3).toNanos());
        String context = setup + ": healed at +" + Duration.ofNanos(healed - ManualRuntime.TICKER_START);
        checkLastingHolders(context, bound, settleBy);
        assertThat(movesOut()).as("no move once the shares settled, %s; %s", describe(), context).isEqualTo(movesSettled);

        crashAfterATransientFailure(random, context);

        stopAll(context);
        assertThat(writes.violations()).as("what writes reported against what the log holds; %s", context).isEmpty();
        assertThat(violations).as(context).isEmpty();
        assertThat(taskFailures).as("tasks that threw; %s", context).isEmpty();
        checkTheLogHasOneWriterAtATime(context);
        assertThat(writes.any(Outcome.RETURNED)).as("writes that returned; %s", context).isTrue();
        writes.tally().forEach((outcome, count) -> TOTALS.computeIfAbsent(outcome, o -> new LongAdder()).add(count));
        TOTALS.computeIfAbsent("seeds", o -> new LongAdder()).increment();
    }

    /** After the faults: each role's last grant by {@code settleBy}, and that holder still holds it three leases later. */
    private void checkLastingHolders(String context, Duration bound, long settleBy) {
        for (Role role : ROLES) {
            Grant last = grants.stream().filter(g -> g.role().equals(role)).max(Comparator.comparingLong(Grant::term))
                    .orElseThrow(() -> new AssertionError(role + " was never granted; " + context + describe()));
            String what = context + "; " + role + ": last grant " + last + "; ends " + ends + describe();
            assertThat(last.atNanos()).as("a lasting holder within %s of the faults ending; %s", bound, what)
                    .isLessThanOrEqualTo(settleBy);
            assertThat(holders(role)).as("one holder, the last granted, three leases later; %s", what)
                    .containsExactly(last.member());
            assertThat(members.get(last.member()).contenders.get(role).leadership().orElseThrow().term()).as(what)
                    .isEqualTo(last.term());
        }
    }

    /**
     * Issue 36, finding 5: describes of the member that holds the most roles fail for a
     * while, and its producers reconnect (so its next leases carry the last epoch it knew,
     * not a prediction); once each of its roles committed again after that, and a little
     * later, it crashes. Each of its roles has a new holder within {@link #TAKEOVER_BOUND}.
     * Then it comes back as a new process and the roles settle again.
     */
    private void crashAfterATransientFailure(SplittableRandom random, String context) {
        Member victim = members.values().stream().filter(Member::running)
                .max(Comparator.comparingInt(m -> heldBy(m).size())).orElseThrow();
        victim.flaky.describesFailUntil = runtime.nanoTime() + Duration.ofMillis(random.nextLong(100, 1_000)).toNanos();
        cluster.reconnectProducers();
        runUntil(victim.flaky.describesFailUntil);
        long recovered = runtime.nanoTime();
        // Each role it still holds committed a transaction with describes answering again.
        runUntil(() -> heldBy(victim).stream().allMatch(role -> victim.flaky.lastCommit.getOrDefault(role, 0L) > recovered),
                CONFIG.renewInterval().multipliedBy(3));
        runUntil(runtime.nanoTime() + Duration.ofMillis(random.nextLong(0, 600)).toNanos());
        List<Role> orphaned = heldBy(victim);
        victim.runtime.freeze();
        victim.crashed = true;
        long crashed = runtime.nanoTime();
        runUntil(() -> orphaned.stream().allMatch(role -> !holders(role).isEmpty()),
                TAKEOVER_BOUND.plus(CONFIG.duration().multipliedBy(2)));
        for (Role role : orphaned) {
            long taken = grants.stream().filter(g -> g.role().equals(role) && g.atNanos() >= crashed).mapToLong(Grant::atNanos)
                    .min().orElse(Long.MAX_VALUE);
            LONGEST_TAKEOVER.accumulate(Duration.ofNanos(taken - crashed).toMillis());
            assertThat(Duration.ofNanos(taken - crashed))
                    .as("%s held %s and crashed after a transient failure (describes failed until +%s); ends %s%s; %s",
                            victim.id, role, Duration.ofNanos(recovered - ManualRuntime.TICKER_START), ends, describe(), context)
                    .isLessThanOrEqualTo(TAKEOVER_BOUND);
        }
        startMember(victim.id);
        runUntil(runtime.nanoTime() + CONFIG.duration().multipliedBy(2).plus(SETTLE_SLACK)
                .plus(balance == Balance.SPREAD ? SPREAD_SLACK : Duration.ZERO).toNanos());
        for (Role role : ROLES) {
            assertThat(holders(role)).as("one holder of %s after the restart; %s%s", role, context, describe()).hasSize(1);
        }
    }

    /** Every member stops as an application's shutdown stops it; each releases what it holds. */
    private void stopAll(String context) {
        List<Member> live = members.values().stream().filter(m -> !m.crashed).toList();
        live.forEach(m -> m.contenders.values().forEach(Contender::stop));
        for (Member member : live) {
            for (Contender contender : member.contenders.values()) {
                assertThat(contender.awaitStopped(Duration.ofSeconds(10))).as("%s stops; %s", contender, context).isTrue();
                assertThat(contender.leadership()).as(context).isEmpty();
            }
            member.stopped = true;
        }
        // Writes scheduled before the stops run and end.
        runUntil(runtime.nanoTime() + Duration.ofSeconds(1).toNanos());
        for (Member member : live) {
            assertThat(member.flaky.memory().preparedRoles()).as("producers %s keeps after its stop; %s", member.id, context).isEmpty();
            assertThat(member.client.roleEntries()).as("per-role state %s keeps after its stop; %s", member.id, context)
                    .allSatisfy((map, entries) -> assertThat(entries).as(map).isZero());
        }
        CoordinationClient observer = new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);
        for (Role role : ROLES) {
            assertThat(observer.observe(role, Duration.ZERO).lease()).as("%s released with a tombstone; %s", role, context)
                    .isEmpty();
        }
    }

    /** The control: the outcome check catches a write reported as fenced though it committed. */
    @Test
    void theOutcomeCheckCatchesACommittedWriteReportedAsFenced() {
        roleSets.putAll(equalRoleSets());
        startMember("a");
        runUntil(() -> writes.any(Outcome.RETURNED), Duration.ofSeconds(10));
        members.get("a").flaky.lie = FlakyTransport.Lie.COMMITTED_AS_FENCED;
        runUntil(() -> writes.any(Outcome.FENCED), Duration.ofSeconds(10));

        assertThat(writes.violations()).anySatisfy(violation -> assertThat(violation)
                .contains("FENCED").contains("in the log 1 time"));
    }

    /** The control: the outcome check catches a write reported as returned though it was fenced. */
    @Test
    void theOutcomeCheckCatchesAFencedWriteReportedAsReturned() {
        roleSets.putAll(equalRoleSets());
        startMember("a");
        Member liar = members.get("a");
        runUntil(() -> writes.any(Outcome.RETURNED), Duration.ofSeconds(10));
        liar.flaky.lie = FlakyTransport.Lie.FENCED_AS_RETURNED;
        challenger.initEpoch(heldBy(liar).get(0));
        runUntil(() -> liar.flaky.lies > 0, Duration.ofSeconds(5));

        assertThat(writes.violations()).anySatisfy(violation -> assertThat(violation)
                .contains("RETURNED").contains("in the log 0 times"));
    }

    /** The control of the order check: a command of an older term after a newer one's is a second writer. */
    @Test
    void theOrderCheckCatchesACommandOfAnOlderTermAfterANewerOne() {
        roleSets.putAll(equalRoleSets());
        startMember("a");
        runUntil(() -> writes.count(Outcome.RETURNED) >= 2, Duration.ofSeconds(10));
        WriteOutcomes.Write last = writes.last(Outcome.RETURNED).orElseThrow();
        // As if a deposed holder's write, of an older term, committed after the newer leadership's.
        writes.forge("a", last.role, last.term - 1, Outcome.RETURNED, cluster::produce);

        assertThat(writes.violations()).anySatisfy(violation -> assertThat(violation).contains("after command"));
    }

    private void inject(SplittableRandom random) {
        List<Member> running = members.values().stream().filter(Member::running).toList();
        Role role = ROLES.get(random.nextInt(ROLES.size()));
        switch (random.nextInt(12)) {
            case 0 -> {
                if (running.size() > 1) {
                    running.get(random.nextInt(running.size())).runtime.freeze();
                }
            }
            case 1 -> members.values().stream().filter(m -> m.runtime.frozen && !m.crashed).findFirst()
                    .ifPresent(m -> m.runtime.resume());
            case 2 -> {
                if (running.size() > 1) {
                    Member crashed = running.get(random.nextInt(running.size()));
                    crashed.runtime.freeze();
                    crashed.crashed = true;
                }
            }
            case 3 -> members.keySet().stream().filter(id -> members.get(id).crashed).findFirst().ifPresent(this::startMember);
            // An operator's release runs on a thread of the member, as in MemberSimulationTest, while no fault is open.
            case 4 -> {
                if (faults.isEmpty()) {
                    running.stream().filter(m -> m.contenders.containsKey(role))
                            .forEach(m -> m.runtime.workers().execute(() -> m.contenders.get(role).release()));
                }
            }
            case 5 -> cluster.delayVisibility(Duration.ofMillis(random.nextLong(0, 3_000)));
            // Another role's transaction left open on the partition: the last stable offset stays behind it.
            case 6 -> faults.add(cluster.holdVisibility(challenger.partition(role)));
            case 7 -> {
                cluster.loseNextCommit(role, LostCommit.values()[random.nextInt(LostCommit.values().length)]);
                lostArmed.add(role);
            }
            // Another process challenges and never writes.
            case 8 -> challenger.initEpoch(role);
            case 9 -> cluster.reconnectProducers();
            // A transient failure, then a crash: describes fail for a while, maybe a transaction too.
            case 10 -> {
                if (running.size() > 1) {
                    Member member = running.get(random.nextInt(running.size()));
                    member.flaky.describesFailUntil = runtime.nanoTime()
                            + Duration.ofMillis(random.nextLong(100, 1_000)).toNanos();
                    member.flaky.transactionsToFail = random.nextInt(2);
                    crashAt.put(member, runtime.nanoTime() + Duration.ofMillis(random.nextLong(0, 1_500)).toNanos());
                }
            }
            // Transactions that fail before their commit was sent: transiently (retried), or as a timeout (reported).
            default -> {
                if (!running.isEmpty()) {
                    Member member = running.get(random.nextInt(running.size()));
                    member.flaky.transactionsToFail += 1 + random.nextInt(3);
                    member.flaky.failuresRetriable = random.nextBoolean();
                }
            }
        }
        // Faults last a while, then end by themselves.
        if (!faults.isEmpty() && random.nextInt(3) == 0) {
            faults.remove(random.nextInt(faults.size())).close();
        }
    }

    private void crashWhenDue() {
        crashAt.entrySet().removeIf(due -> {
            if (runtime.nanoTime() < due.getValue()) {
                return false;
            }
            Member member = due.getKey();
            if (member.running() && members.values().stream().filter(Member::running).count() > 1) {
                member.runtime.freeze();
                member.crashed = true;
            }
            return true;
        });
    }

    /**
     * Every fault ends: open transactions end, visibility is no longer delayed, transient
     * failures stop, paused members go on and crashed ones come back as new processes; a
     * commit still armed to lose its answer is lost at the role's next commit, and the
     * faults end only then.
     */
    private void heal() {
        faults.forEach(InMemoryCluster.Fault::close);
        faults.clear();
        crashAt.clear();
        cluster.delayVisibility(Duration.ZERO);
        members.values().forEach(m -> {
            m.flaky.describesFailUntil = 0;
            m.flaky.transactionsToFail = 0;
        });
        members.values().stream().filter(m -> !m.crashed).forEach(m -> m.runtime.resume());
        new ArrayList<>(members.keySet()).stream().filter(id -> members.get(id).crashed).forEach(this::startMember);
        runUntil(lostArmed::isEmpty, CONFIG.duration().multipliedBy(4));
    }

    /** Moves time one tick, then checks what members believe against each other. */
    private void tick() {
        runtime.advance(TICK);
        // A running member's leadership ends at its lease's deadline at the latest (its expiry timer).
        Instant late = runtime.clock().instant().minus(TICK.multipliedBy(2));
        for (Member member : members.values()) {
            if (member.running()) {
                member.contenders.forEach((role, contender) -> contender.leadership().filter(held -> held.deadline().isBefore(late))
                        .ifPresent(held -> violations.add(member.id + " believes it holds " + role + " (term " + held.term()
                                + ") past its lease's deadline " + held.deadline())));
            }
        }
        for (Role role : ROLES) {
            List<Member> holding = members.values().stream().filter(Member::running)
                    .filter(m -> m.contenders.containsKey(role) && m.contenders.get(role).leadership().isPresent()).toList();
            if (holding.size() < 2) {
                overlapSince.remove(role);
                continue;
            }
            long since = overlapSince.computeIfAbsent(role, r -> runtime.nanoTime());
            if (runtime.nanoTime() - since > CONFIG.duration().plus(TICK.multipliedBy(2)).toNanos()) {
                violations.add(holding.stream().map(m -> m.id + " (term " + m.contenders.get(role).leadership().get().term()
                        + ")").toList() + " each believes it holds " + role + " for longer than a lease");
                overlapSince.remove(role);
            }
        }
        long windowStart = runtime.nanoTime() - CONFIG.duration().toNanos();
        for (Role role : ROLES) {
            long recent = grants.stream().filter(g -> g.role().equals(role) && g.atNanos() >= windowStart).count();
            if (recent > MAX_GRANTS_PER_LEASE) {
                violations.add(recent + " grants of " + role + " within one lease: a storm");
            }
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(setup + " at +" + runtime.elapsed() + ": " + violations + "; grants "
                    + grants.subList(Math.max(0, grants.size() - 12), grants.size()) + "; ends " + ends + describe());
        }
    }

    private void runUntil(long nanos) {
        while (runtime.nanoTime() < nanos) {
            tick();
        }
    }

    private void runUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            if (runtime.nanoTime() - start > within.toNanos()) {
                throw new AssertionError("waited " + within + " in vain at +" + runtime.elapsed() + "; ends " + ends + describe());
            }
            tick();
        }
    }

    /**
     * The broker's view of the coordination topic, as {@link MemberSimulationTest} checks
     * it: per role and producer id, in log order, lease epochs never go back.
     */
    private void checkTheLogHasOneWriterAtATime(String context) {
        for (int partition = 0; partition < TOPIC.partitions(); partition++) {
            Map<String, CoordinationRecord.Lease> last = new HashMap<>();
            for (RawRecord raw : cluster.records(new TopicPartition(TOPIC.name(), partition))) {
                CoordinationKey key = CoordinationCodec.decodeKey(raw.key());
                Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), raw.value());
                if (value.isEmpty() || !(value.get() instanceof CoordinationRecord.Lease lease)) {
                    continue;
                }
                CoordinationRecord.Lease before = last.put(key.role() + "/" + lease.producerId(), lease);
                if (before != null) {
                    assertThat(lease.producerEpoch()).as("%s: %s at offset %d of %s after %s", context, lease, raw.offset(),
                            key.role(), before).isGreaterThanOrEqualTo(before.producerEpoch());
                }
            }
        }
    }

    private long movesOut() {
        return members.values().stream().filter(m -> !m.crashed).mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut())
                .sum();
    }

    private List<String> holders(Role role) {
        return members.values().stream().filter(Member::running)
                .filter(m -> m.contenders.containsKey(role) && m.contenders.get(role).leadership().isPresent()).map(m -> m.id)
                .toList();
    }

    private static List<Role> heldBy(Member member) {
        return member.contenders.entrySet().stream().filter(e -> e.getValue().leadership().isPresent()).map(Map.Entry::getKey)
                .toList();
    }

    private String describe() {
        StringBuilder text = new StringBuilder();
        members.values().forEach(m -> m.contenders.forEach((role, c) -> text.append("\n  ").append(m.id).append(' ').append(role)
                .append(m.crashed ? " crashed" : m.runtime.frozen ? " frozen" : "").append(' ').append(c)
                .append(c.problem().map(p -> " problem: " + p.getMessage()).orElse(""))));
        return text.toString();
    }

    /** The same roles for every member. */
    private static Map<String, List<Role>> equalRoleSets() {
        Map<String, List<Role>> sets = new LinkedHashMap<>();
        MEMBERS.forEach(id -> sets.put(id, ROLES));
        return sets;
    }

    /** Different roles per member: each contends for two or more, each role has two or more contenders. */
    private static Map<String, List<Role>> differentRoleSets(SplittableRandom random) {
        while (true) {
            Map<String, List<Role>> sets = new LinkedHashMap<>();
            for (String id : MEMBERS) {
                sets.put(id, ROLES.stream().filter(role -> random.nextInt(3) != 0).toList());
            }
            boolean membersContend = sets.values().stream().allMatch(roles -> roles.size() >= 2);
            boolean rolesContended = ROLES.stream().allMatch(role -> sets.values().stream().filter(r -> r.contains(role)).count() >= 2);
            boolean different = sets.values().stream().distinct().count() > 1;
            if (membersContend && rolesContended && different) {
                return sets;
            }
        }
    }

    /** Writes the next command of {@code leadership} in 100 to 300 ms, on the member's workers. */
    private void writeLater(Member member, Role role, Leadership leadership) {
        Duration in = Duration.ofMillis(member.random.nextLong(100, 300));
        member.runtime.schedule(() -> member.runtime.workers().execute(() -> writeOnce(member, role, leadership)), in);
    }

    private void writeOnce(Member member, Role role, Leadership leadership) {
        if (member.stopped) {
            return;
        }
        WriteOutcomes.Write write = writes.write(leadership, member.id, () -> member.crashed);
        // The work goes on while the leadership may: after a failure that did not end it too.
        if (write.outcome == Outcome.RETURNED || (write.outcome == Outcome.FAILED && leadership.isActive())) {
            writeLater(member, role, leadership);
        }
    }

    /** A new process of member {@code id}: a transport, a client and a started contender per role of its set. */
    private void startMember(String id) {
        Member member = new Member(id, roleSets.get(id));
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
    }

    /** An injected error from a listener: the contender must go on. */
    private static final class ListenerError extends Error {
        private static final long serialVersionUID = 1L;

        ListenerError() {
            super("injected: a listener's renewed threw", null, false, false);
        }
    }

    private final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(WriteOutcomeSimulationTest.this.runtime);
        // Each process's own randomness, split off the seed's in a deterministic order.
        final SplittableRandom random = processRandoms.split();
        final FlakyTransport flaky;
        final CoordinationClient client;
        final Map<Role, Contender> contenders = new LinkedHashMap<>();
        boolean crashed;
        boolean stopped;

        Member(String id, List<Role> roles) {
            this.id = id;
            this.flaky = new FlakyTransport(id, cluster, runtime, cluster.transport(TOPIC), challenger, random.split(),
                    lostArmed::remove);
            this.client = new CoordinationClient(flaky.transport(), CONFIG, runtime).balance(balance);
            for (Role role : roles) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        // When it was granted, not when the callback ran (a paused member's run late).
                        long grantedNanos = WriteOutcomeSimulationTest.this.runtime.nanoTime() - Duration.between(
                                leadership.grantedAt(), WriteOutcomeSimulationTest.this.runtime.clock().instant()).toNanos();
                        grants.add(new Grant(role, id, leadership.term(), grantedNanos));
                        // One writer, or two whose writes (and retries) interleave.
                        for (int writers = 1 + random.nextInt(2); writers > 0; writers--) {
                            writeLater(Member.this, role, leadership);
                        }
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add("+" + WriteOutcomeSimulationTest.this.runtime.elapsed() + " " + id + " " + role + " term "
                                + leadership.term() + " " + cause + (failure == null ? "" : " (" + failure.getMessage() + ")"));
                    }

                    @Override
                    public void renewed(Leadership leadership, Duration took) {
                        if (renewedThrowsOneIn > 0 && random.nextInt(renewedThrowsOneIn) == 0) {
                            throw new ListenerError();
                        }
                    }
                }));
            }
        }

        boolean running() {
            return !crashed && !stopped && !runtime.frozen;
        }
    }
}

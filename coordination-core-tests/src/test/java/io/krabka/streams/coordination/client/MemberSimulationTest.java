package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.ManualRuntime;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.Handover;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whole members, started as an application starts them, on one {@link ManualRuntime}:
 * their passes, news wake-ups, renewal scheduling, expiry timers, rejoin pauses, releases
 * and listener callbacks all run as in production, only on simulated time and one thread
 * at a time, so a seed replays exactly. Several members contend for several roles that
 * share partitions, while a seeded plan pauses members (a GC pause or SIGSTOP: nothing of
 * theirs runs), crashes and restarts them, releases roles, and injects cluster faults:
 * commit markers that keep records invisible, a partition stuck behind an open
 * transaction, a frozen transaction coordinator, a dead partition leader (calls block
 * until their timeout), slow InitProducerIds.
 *
 * <p>Checked after every tick: no member believes it holds a role longer than a lease
 * past another member's later grant; a deposed holder never commits after a newer
 * leadership's grant (read from the log, the broker's view); no storm (grants per role
 * per lease bounded). Once the faults stop: every role has one holder within a lease plus
 * the capped stagger plus a stated slack, and keeps it for three leases.
 */
@Execution(ExecutionMode.CONCURRENT)
class MemberSimulationTest {

    private static final LeaseConfig CONFIG = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(2);
    private static final List<Role> ROLES = IntStream.range(0, 4).mapToObj(i -> Role.of("role-" + i)).toList();
    private static final List<String> MEMBERS = List.of("a", "b", "c");
    private static final Duration TICK = Duration.ofMillis(50);
    private static final Duration FAULTS_FOR = Duration.ofSeconds(20);
    /**
     * After the faults stop: a lease (the last holder's deadline), the stagger of every
     * rank ahead (capped at a lease), and slack: up to 3 s for a call that a fault slowed
     * and that is still in flight (a late InitProducerId may still fence a fresh holder:
     * one more handover), a standby's one-second pass, and the one-second rejoin pause.
     */
    private static final Duration SETTLE_SLACK = Duration.ofSeconds(5);
    /** Under spread, after the settle: two renew intervals, a probe's timeout, half a second per role's move. */
    private static final Duration SPREAD_SLACK = CONFIG.renewInterval().multipliedBy(2).plus(Handover.PROBE_TIMEOUT)
            .plus(Duration.ofMillis(500).multipliedBy(ROLES.size()));
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);
    /**
     * Grants of one role within any one lease, faults included: each member at most twice
     * (a grant fenced at once by a concurrent challenger, then its turn once more). The
     * storm this catches made 18 grants a lease.
     */
    private static final int MAX_GRANTS_PER_LEASE = 2 * MEMBERS.size();

    private final ManualRuntime runtime = ManualRuntime.builder().clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(OPERATION_TIMEOUT);
    private final Map<String, Member> members = new LinkedHashMap<>();
    private final List<Grant> grants = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<String> ends = new CopyOnWriteArrayList<>();
    /** Per role, since when two running members have believed they hold it at once. */
    private final Map<Role, Long> overlapSince = new HashMap<>();
    private Balance balance = Balance.NONE;
    /** Whether a violation is only recorded (the control test), not thrown at once. */
    private boolean failSlowly;

    private record Grant(Role role, String member, long term, long atNanos) {
    }

    @AfterEach
    void close() {
        runtime.close();
    }

    static LongStream seeds() {
        return LongStream.range(0, Long.getLong("sim.seeds", 1_000));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void startedMembersUnderFaultsKeepOneWriterAndSettleToOneLastingHolderPerRole(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        cluster.setTransactionVersion(seed % 3 == 0 ? (short) 1 : (short) 2);
        // Every other seed spreads the roles: moves by handover join the faults, and every check holds the same.
        balance = seed % 2 == 1 ? Balance.SPREAD : Balance.NONE;
        MEMBERS.forEach(this::startMember);
        List<InMemoryCluster.Fault> faults = new ArrayList<>();
        long faultsEnd = runtime.nanoTime() + FAULTS_FOR.toNanos();
        while (runtime.nanoTime() < faultsEnd) {
            if (random.nextInt(20) == 0) {
                inject(random, faults);
            }
            tick();
        }
        // Everything heals: cluster faults end, paused members go on, crashed ones restart.
        faults.forEach(InMemoryCluster.Fault::close);
        cluster.delayVisibility(Duration.ZERO);
        // A crashed process stays dead; its member comes back as a new one.
        members.values().stream().filter(member -> !member.crashed).forEach(member -> member.runtime.resume());
        new ArrayList<>(members.keySet()).stream().filter(id -> members.get(id).crashed).forEach(this::startMember);

        long healed = runtime.nanoTime();
        Duration bound = CONFIG.duration().plus(CONFIG.duration()).plus(SETTLE_SLACK);
        if (balance == Balance.SPREAD) {
            // Then the moves that even the shares out: the balancer's settle, one probe of a
            // member that may be gone, and a handover per role.
            bound = bound.plus(SPREAD_SLACK);
        }
        long settleBy = healed + bound.toNanos();
        long until = settleBy + CONFIG.duration().multipliedBy(3).toNanos();
        while (runtime.nanoTime() < until) {
            tick();
        }
        for (Role role : ROLES) {
            List<Grant> ofRole = grants.stream().filter(g -> g.role().equals(role)).toList();
            // The newest grant: a paused member's callbacks run late, so the list is not in term order.
            Grant last = ofRole.stream().max(java.util.Comparator.comparingLong(Grant::term)).orElseThrow();
            String context = "seed " + seed + ", " + role + ": healed at +" + Duration.ofNanos(healed - ManualRuntime.TICKER_START)
                    + "; last grant " + last + "; holders now " + holdersOfAll() + "; ends " + ends + describeMembers();
            assertThat(last.atNanos()).as("a lasting holder within %s of the faults ending; %s", bound, context)
                    .isLessThanOrEqualTo(settleBy);
            assertThat(holders(role)).as("one holder, the last granted, three leases later; %s", context)
                    .containsExactly(last.member());
            assertThat(members.get(last.member()).contenders.get(role).leadership().orElseThrow().term()).as(context)
                    .isEqualTo(last.term());
        }
        assertThat(violations).as("seed %d", seed).isEmpty();
        checkTheLogHasOneWriterAtATime(seed);
        assertThat(grants).as("seed %d: grants", seed).isNotEmpty();
    }

    /** The same harness catches a member that never learns it was deposed: a control for the overlap check. */
    @Test
    void theOverlapCheckCatchesAHolderThatGoesOnBelievingPastAnotherGrant() {
        failSlowly = true;
        startMember("a");
        startMember("b");
        while (holders(ROLES.get(0)).isEmpty()) {
            tick();
        }
        String first = holders(ROLES.get(0)).get(0);
        // Its timers and renewals never run again, but it stays "running" to the check, as a
        // member whose expiry timer were broken would.
        members.get(first).runtime.freeze();
        members.get(first).pretendRunning = true;
        long start = runtime.nanoTime();
        while (violations.isEmpty() && runtime.nanoTime() - start < Duration.ofSeconds(20).toNanos()) {
            tick();
        }
        assertThat(violations).first().asString().contains("believes it holds");
    }

    private void inject(SplittableRandom random, List<InMemoryCluster.Fault> faults) {
        List<String> running = members.keySet().stream().filter(id -> members.get(id).running()).toList();
        Role role = ROLES.get(random.nextInt(ROLES.size()));
        switch (random.nextInt(9)) {
            case 0 -> {
                if (running.size() > 1) {
                    members.get(running.get(random.nextInt(running.size()))).runtime.freeze();
                }
            }
            case 1 -> members.values().stream().filter(m -> m.runtime.frozen && !m.crashed).findFirst()
                    .ifPresent(m -> m.runtime.resume());
            case 2 -> {
                if (running.size() > 1) {
                    Member crashed = members.get(running.get(random.nextInt(running.size())));
                    crashed.runtime.freeze();
                    crashed.crashed = true;
                }
            }
            case 3 -> members.keySet().stream().filter(id -> members.get(id).crashed).findFirst().ifPresent(this::startMember);
            // An operator's release runs on a thread of the member, not on the simulation's driver.
            // It waits for a renewal under way (one producer per role): only while no cluster
            // fault can block that renewal, since the simulation cannot model a thread waiting
            // on a monitor that a sleeping task holds.
            case 4 -> {
                if (faults.isEmpty()) {
                    running.stream().map(members::get)
                            .forEach(m -> m.runtime.workers().execute(() -> m.contenders.get(role).release()));
                }
            }
            case 5 -> cluster.delayVisibility(Duration.ofMillis(random.nextLong(0, 5_000)));
            case 6 -> faults.add(cluster.freezeCoordinator(role));
            case 7 -> faults.add(cluster.freezePartition(new TopicPartition(TOPIC.name(),
                    random.nextInt(TOPIC.partitions()))));
            default -> faults.add(cluster.slowInitProducerId(role, Duration.ofMillis(random.nextLong(0, 3_000))));
        }
        // Faults last a while, then end by themselves.
        if (!faults.isEmpty() && random.nextInt(3) == 0) {
            faults.remove(random.nextInt(faults.size())).close();
        }
    }

    /** Moves time one tick, then checks what members believe against each other. */
    private void tick() {
        runtime.advance(TICK);
        for (Role role : ROLES) {
            List<Member> holding = members.values().stream().filter(m -> m.running() || m.pretendRunning)
                    .filter(m -> m.contenders.get(role).leadership().isPresent()).toList();
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
        if (!violations.isEmpty() && !failSlowly) {
            throw new AssertionError("at +" + runtime.elapsed() + ": " + violations + "; grants "
                    + grants.subList(Math.max(0, grants.size() - 12), grants.size()));
        }
    }

    /**
     * The broker's view: per role and producer id, in log order, lease epochs never go
     * back. A deposed holder's lease after a newer leadership's grant would carry an epoch
     * below the grant's: the coordinator bumped it for the challenger.
     */
    private void checkTheLogHasOneWriterAtATime(long seed) {
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
                    assertThat(lease.producerEpoch()).as("seed %d: %s at offset %d of %s after %s", seed, lease, raw.offset(),
                            key.role(), before).isGreaterThanOrEqualTo(before.producerEpoch());
                }
            }
        }
    }

    private List<String> holders(Role role) {
        return members.values().stream().filter(Member::running)
                .filter(m -> m.contenders.get(role).leadership().isPresent()).map(m -> m.id).toList();
    }

    private String describeMembers() {
        StringBuilder text = new StringBuilder();
        members.values().forEach(m -> m.contenders.forEach((role, c) -> text.append("\n  ").append(m.id).append(' ').append(role)
                .append(m.crashed ? " crashed" : m.runtime.frozen ? " frozen" : "").append(' ').append(c)
                .append(c.problem().map(p -> " problem: " + p.getMessage()).orElse(""))));
        ROLES.forEach(role -> text.append("\n  ").append(role).append(": ")
                .append(new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime).observe(role, Duration.ZERO)));
        return text.toString();
    }

    private Map<Role, String> holdersOfAll() {
        Map<Role, String> holders = new LinkedHashMap<>();
        ROLES.forEach(role -> holders.put(role, String.join(",", holders(role))));
        return holders;
    }

    /** A new process of member {@code id}: a transport, a client and a started contender per role. */
    private void startMember(String id) {
        Member member = new Member(id);
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
    }

    private final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(MemberSimulationTest.this.runtime);
        final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        final CoordinationClient client = new CoordinationClient(transport, CONFIG, runtime).balance(balance);
        final Map<Role, Contender> contenders = new LinkedHashMap<>();
        boolean crashed;
        boolean pretendRunning;

        Member(String id) {
            this.id = id;
            for (Role role : ROLES) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        // When it was granted, not when the callback ran (a paused member's run late).
                        long grantedNanos = MemberSimulationTest.this.runtime.nanoTime() - Duration.between(leadership.grantedAt(),
                                MemberSimulationTest.this.runtime.clock().instant()).toNanos();
                        grants.add(new Grant(role, id, leadership.term(), grantedNanos));
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add("+" + MemberSimulationTest.this.runtime.elapsed() + " " + id + " " + role + " term "
                                + leadership.term() + " " + cause + (failure == null ? "" : " (" + failure.getMessage() + ")"));
                    }
                }));
            }
        }

        boolean running() {
            return !crashed && !runtime.frozen;
        }
    }
}

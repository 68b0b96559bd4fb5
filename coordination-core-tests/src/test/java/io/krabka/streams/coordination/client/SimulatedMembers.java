package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.Handover;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.kafka.common.TopicPartition;

/**
 * Whole simulated members on one {@link ManualRuntime}, started as an application starts
 * them: each {@link Member} is a process of its own (a {@link MemberRuntime} that can be
 * paused or crashed, an in-memory transport, a {@link CoordinationClient} with a
 * {@link Balance}, and a started {@link Contender} per role of its set), all against one
 * {@link InMemoryCluster}, on simulated time that moves only when a test ticks it, one
 * thread at a time, so a seed replays exactly.
 *
 * <p>Every grant and every end is recorded ({@link #grants}, {@link #ends}), and so is
 * every stretch a role had no running holder ({@link #gaps}). After every {@link #tick()}
 * the shared checks run, and a violation fails the test at once (unless
 * {@link #failSlowly()}), with the newest grants, every end and each member's state:
 * <ul>
 * <li>never two running members believing they hold one role: at no tick by default, or
 * for no longer than {@link #overlapTolerated(Duration)} where faults let a deposed holder
 * learn late;
 * <li>where set, no storm of grants ({@link #grantStormAbove(int)}) and no running member
 * believing it holds a role past its lease's deadline ({@link #checkDeadlines()});
 * <li>and whatever a test adds with {@link #everyTick(Runnable)}.
 * </ul>
 *
 * <p>A test owns one per test method and closes it after ({@link #close()}).
 */
final class SimulatedMembers implements AutoCloseable {

    /** The lease every simulation here runs with: two seconds, renewed every 500 ms, a 500 ms stagger. */
    static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
    /** One step of simulated time: the checks run after each. */
    static final Duration TICK = Duration.ofMillis(50);
    /** How long a call the cluster does not answer (a frozen partition or coordinator) blocks before it times out. */
    static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);
    /**
     * Once faults stop, the slack beyond a lease and the capped stagger before every role
     * has a lasting holder: up to 3 s for a call that a fault slowed and that is still in
     * flight (a late InitProducerId may still fence a fresh holder: one more handover), a
     * standby's one-second pass, and the one-second rejoin pause.
     */
    private static final Duration SETTLE_SLACK = Duration.ofSeconds(5);
    /** How many of the newest grants a failure message shows (a seed under faults makes hundreds). */
    private static final int GRANTS_SHOWN = 30;

    final ManualRuntime runtime = ManualRuntime.builder()
            .clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(OPERATION_TIMEOUT);
    final TopicSpec topic;
    /** Every role of the simulation; a member contends for those of its set. */
    final List<Role> roles;
    /** The members by id, in start order; starting an id again (a restart) replaces its old process. */
    final Map<String, Member> members = new LinkedHashMap<>();
    /** Every grant, in the order the callbacks ran (a paused member's run late). */
    final List<Grant> grants = new GrantLog();
    /** Every end of a leadership, in the order the callbacks ran. */
    final List<End> ends = new CopyOnWriteArrayList<>();
    /** What the checks found; the test fails at once on the first unless {@link #failSlowly()}. */
    final List<String> violations = new CopyOnWriteArrayList<>();
    /** Each stretch a role went without a running holder that has ended (open ones: {@link #longestGapSince}). */
    final List<Gap> gaps = new ArrayList<>();

    private final Map<Role, Long> leaderlessSince = new HashMap<>();
    /** Per role, since when two running members have believed they hold it at once. */
    private final Map<Role, Long> overlapSince = new HashMap<>();

    private final List<Runnable> checks = new ArrayList<>();
    /**
     * Per role, the times of its grants not yet out of the storm check's window, earliest
     * first: each tick adds the grants recorded since the last and drops those the window
     * left behind (it only moves on), instead of scanning every grant of the seed again.
     */
    private final Map<Role, PriorityQueue<Long>> stormWindow = new HashMap<>();
    /** How many of {@link #grants} the storm check has taken in, and of which generation of the list. */
    private int stormSeen;

    private long stormGeneration;
    private Duration overlapTolerated = Duration.ZERO;
    private int grantStormAbove = Integer.MAX_VALUE;
    private boolean deadlinesChecked;
    private boolean failSlowly;
    private boolean grantsTimedAtTheGrant;
    private Supplier<String> context = () -> "";

    SimulatedMembers(TopicSpec topic, List<Role> roles) {
        this.topic = topic;
        this.roles = List.copyOf(roles);
    }

    /**
     * The seeds a seeded test runs: the one named by system property {@code one}, else
     * {@code 0} to the count property {@code count} sets (default {@code defaultCount}).
     */
    static LongStream seeds(String one, String count, long defaultCount) {
        Long single = Long.getLong(one);
        return single != null ? LongStream.of(single) : LongStream.range(0, Long.getLong(count, defaultCount));
    }

    /** Runs one seed of {@code test}; a failure says which seed failed and the one command that replays it. */
    static void replayable(String test, String seedProperty, long seed, Runnable simulation) {
        try {
            simulation.run();
        } catch (Throwable failure) {
            throw new AssertionError(
                    "seed " + seed + " failed; replay it with:\n  ./mvnw -B -o -pl coordination-core,"
                            + "coordination-test,coordination-core-tests test -Dsurefire.failIfNoSpecifiedTests=false"
                            + " -Dtest='" + test + "' -D" + seedProperty + "=" + seed + " -Dtests.log.level=info\n"
                            + failure.getMessage(),
                    failure);
        }
    }

    /** {@code role-0} to {@code role-<count - 1>}. */
    static List<Role> roles(int count) {
        return IntStream.range(0, count).mapToObj(i -> Role.of("role-" + i)).toList();
    }

    // ---------------------------------------------------------------- settings

    /**
     * Two running members may believe they hold one role for up to {@code longest}, not
     * at any tick: under faults a paused or partitioned holder learns it was deposed only
     * when it runs again or its lease runs out. Beyond it the overlap is a violation
     * (and is counted again from the next tick it is seen).
     */
    SimulatedMembers overlapTolerated(Duration longest) {
        this.overlapTolerated = longest;
        return this;
    }

    /**
     * More than {@code grants} grants of one role within any one lease are a violation: a
     * storm (counted at the grants' own times, see {@link #grantsTimedAtTheGrant()}).
     */
    SimulatedMembers grantStormAbove(int grants) {
        this.grantStormAbove = grants;
        return this;
    }

    /**
     * A running member's leadership must end at its lease's deadline at the latest (its
     * expiry timer), two ticks of slack: checked after every tick.
     */
    SimulatedMembers checkDeadlines() {
        this.deadlinesChecked = true;
        return this;
    }

    /**
     * Violations are only recorded, not thrown at the tick: for a control test that
     * provokes one and asserts on {@link #violations}.
     */
    SimulatedMembers failSlowly() {
        this.failSlowly = true;
        return this;
    }

    /**
     * Each {@link Grant#atNanos()} is when the leadership was granted (its
     * {@code grantedAt}, on the shared clock), not when its callback ran: under pauses a
     * member's callbacks run late, and the settle and storm checks count grants when they
     * happened. Off by default: the tests without pauses of a granting member time grants
     * as an application sees them, and a member with a skewed clock has its
     * {@code grantedAt} on that clock.
     */
    SimulatedMembers grantsTimedAtTheGrant() {
        this.grantsTimedAtTheGrant = true;
        return this;
    }

    /**
     * The checks of a simulation under faults (pauses, crashes, frozen partitions) with
     * {@code members} members: two members may believe they hold one role for a lease and
     * two ticks (a paused holder learns it was deposed only when it runs again, or at its
     * lease's deadline by its expiry timer); more than two grants per member of one role
     * within a lease are a storm (a grant fenced at once by a concurrent challenger, then
     * its turn once more; the storm this caught made 18 a lease); and grants are timed at
     * the grant, since a paused member's callbacks run late.
     */
    SimulatedMembers underFaults(int members) {
        return overlapTolerated(CONFIG.duration().plus(TICK.multipliedBy(2)))
                .grantStormAbove(2 * members)
                .grantsTimedAtTheGrant();
    }

    /**
     * Once the faults stop, within how long every role has one lasting holder: a lease (the
     * last holder's deadline), the stagger of every rank ahead (capped at a lease), and
     * {@link #SETTLE_SLACK}; under {@link Balance#SPREAD} then the moves that even the
     * shares out: the balancer's settle (two renew intervals), one probe of a member that
     * may be gone, and half a second per role's handover.
     */
    Duration settleWithin(Balance balance) {
        Duration bound = CONFIG.duration().plus(CONFIG.duration()).plus(SETTLE_SLACK);
        if (balance == Balance.SPREAD) {
            bound = bound.plus(CONFIG.renewInterval()
                    .multipliedBy(2)
                    .plus(Handover.PROBE_TIMEOUT)
                    .plus(Duration.ofMillis(500).multipliedBy(roles.size())));
        }
        return bound;
    }

    /** What a failure message starts with: the seed and its settings. */
    SimulatedMembers context(Supplier<String> context) {
        this.context = context;
        return this;
    }

    /** A check of the test's own, run after the shared ones on every tick; it adds to {@link #violations}. */
    SimulatedMembers everyTick(Runnable check) {
        checks.add(check);
        return this;
    }

    // ---------------------------------------------------------------- members

    /** A new process of member {@code id} contending for every role. */
    Member start(String id, Balance balance) {
        return start(id, balance, roles);
    }

    /** A new process of member {@code id} contending for {@code roles}. */
    Member start(String id, Balance balance, List<Role> roles) {
        return start(id, balance, roles, Wiring.PLAIN);
    }

    /**
     * A new process of member {@code id}: a runtime, a transport, a client and a started
     * contender per role of {@code roles}, wired as {@code wiring} says. It replaces a
     * process of the same id (a crashed one coming back).
     */
    Member start(String id, Balance balance, List<Role> roles, Wiring wiring) {
        Member member = new Member(id, balance, roles, wiring);
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
        return member;
    }

    /**
     * Stops every contender of {@code stopping} as an application's shutdown does, on a
     * thread of each member, and runs until none runs any more (each released what it
     * held); then they count as stopped.
     */
    void stop(Collection<Member> stopping, Duration within) {
        List<Member> them = List.copyOf(stopping);
        for (Member member : them) {
            member.runtime.workers().execute(() -> member.contenders.values().forEach(Contender::stop));
        }
        runUntil(
                () -> them.stream().allMatch(m -> m.contenders.values().stream().noneMatch(Contender::isRunning)),
                within);
        them.forEach(m -> m.stopped = true);
    }

    /**
     * The whole of {@code partitions} away: each partition frozen and the coordinator of
     * each of its roles too (calls block until their timeout).
     */
    List<InMemoryCluster.Fault> outage(List<Integer> partitions) {
        List<InMemoryCluster.Fault> faults = new ArrayList<>();
        partitions.forEach(p -> faults.add(cluster.freezePartition(new TopicPartition(topic.name(), p))));
        InMemoryCoordinationTransport any = members.values().iterator().next().transport;
        roles.stream()
                .filter(role -> partitions.contains(any.partition(role).partition()))
                .forEach(role -> faults.add(cluster.freezeCoordinator(role)));
        return faults;
    }

    // ---------------------------------------------------------------- time

    /** Moves time one tick, then checks what the members believe against each other. */
    void tick() {
        runtime.advance(TICK);
        long now = runtime.nanoTime();
        if (deadlinesChecked) {
            checkDeadlines(now);
        }
        // Plain loops, not a stream per role: this runs after every tick of every seed.
        List<Member> checked = new ArrayList<>(members.size());
        for (Member member : members.values()) {
            if (member.checked()) {
                checked.add(member);
            }
        }
        for (Role role : roles) {
            List<Member> holding = new ArrayList<>(2);
            for (Member member : checked) {
                if (member.holds(role)) {
                    holding.add(member);
                }
            }
            checkOverlap(role, holding, now);
            trackGap(role, holding.isEmpty(), now);
        }
        if (grantStormAbove < Integer.MAX_VALUE) {
            checkStorm(now);
        }
        checks.forEach(Runnable::run);
        if (!violations.isEmpty() && !failSlowly) {
            throw new AssertionError(prefix() + "at +" + runtime.elapsed() + ": " + violations + state());
        }
    }

    /** Ticks until {@code condition} holds, checked before each tick; fails once more than {@code within} went by. */
    Duration runUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            if (runtime.nanoTime() - start > within.toNanos()) {
                throw new AssertionError(prefix() + "waited " + within + " in vain at +" + runtime.elapsed()
                        + "; shares " + shares() + state());
            }
            tick();
        }
        return Duration.ofNanos(runtime.nanoTime() - start);
    }

    void runFor(Duration duration) {
        runTo(runtime.nanoTime() + duration.toNanos());
    }

    /** Ticks until the shared ticker reaches {@code nanos}. */
    void runTo(long nanos) {
        while (runtime.nanoTime() < nanos) {
            tick();
        }
    }

    // ---------------------------------------------------------------- checks

    private void checkDeadlines(long now) {
        Instant late = runtime.clock().instant().minus(TICK.multipliedBy(2));
        for (Member member : members.values()) {
            if (member.running()) {
                member.contenders.forEach((role, contender) -> contender
                        .leadership()
                        .filter(held -> held.deadline().isBefore(late))
                        .ifPresent(held ->
                                violations.add("+" + runtime.elapsed() + " " + member.id + " believes it holds " + role
                                        + " (term " + held.term() + ") past its lease's deadline " + held.deadline())));
            }
        }
    }

    private void checkOverlap(Role role, List<Member> holding, long now) {
        if (holding.size() < 2) {
            overlapSince.remove(role);
            return;
        }
        long since = overlapSince.computeIfAbsent(role, r -> now);
        if (overlapTolerated.isZero() || now - since > overlapTolerated.toNanos()) {
            violations.add("+" + runtime.elapsed() + " "
                    + holding.stream()
                            .map(m -> m.id + " (term "
                                    + m.contenders
                                            .get(role)
                                            .leadership()
                                            .orElseThrow()
                                            .term() + ")")
                            .toList()
                    + " each believes it holds " + role
                    + (overlapTolerated.isZero() ? "" : " for longer than " + overlapTolerated));
            overlapSince.remove(role);
        }
    }

    private void trackGap(Role role, boolean leaderless, long now) {
        if (leaderless) {
            leaderlessSince.putIfAbsent(role, now);
            return;
        }
        Long since = leaderlessSince.remove(role);
        if (since != null) {
            gaps.add(new Gap(role, since, now));
        }
    }

    private void checkStorm(long now) {
        long windowStart = now - CONFIG.duration().toNanos();
        GrantLog log = (GrantLog) grants;
        List<Grant> all = log;
        if (log.generation != stormGeneration || all.size() < stormSeen) {
            // A test cleared the grants: take them in again from the start.
            stormWindow.clear();
            stormSeen = 0;
            stormGeneration = log.generation;
        }
        for (int i = stormSeen, size = all.size(); i < size; i++) {
            Grant grant = all.get(i);
            stormWindow
                    .computeIfAbsent(grant.role(), r -> new PriorityQueue<>())
                    .add(grant.atNanos());
            stormSeen = i + 1;
        }
        for (Role role : roles) {
            // The grants of role at or after the window's start, as counting them all would find.
            PriorityQueue<Long> times = stormWindow.get(role);
            while (times != null && !times.isEmpty() && times.peek() < windowStart) {
                times.poll();
            }
            long recent = times == null ? 0 : times.size();
            if (recent > grantStormAbove) {
                violations.add(
                        "+" + runtime.elapsed() + " " + recent + " grants of " + role + " within one lease: a storm");
            }
        }
    }

    /**
     * The broker's view of the coordination topic: per role and producer id, in log
     * order, lease epochs never go back. A deposed holder's lease after a newer
     * leadership's grant would carry an epoch below the grant's: the coordinator bumped it
     * for the challenger.
     */
    void checkTheLogHasOneWriterAtATime(String context) {
        for (int partition = 0; partition < topic.partitions(); partition++) {
            Map<String, CoordinationRecord.Lease> last = new HashMap<>();
            for (RawRecord raw : cluster.records(new TopicPartition(topic.name(), partition))) {
                CoordinationKey key = CoordinationCodec.decodeKey(raw.key());
                Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), raw.value());
                if (value.isEmpty() || !(value.get() instanceof CoordinationRecord.Lease lease)) {
                    continue;
                }
                CoordinationRecord.Lease before = last.put(key.role() + "/" + lease.producerId(), lease);
                if (before != null) {
                    assertThat(lease.producerEpoch())
                            .as("%s: %s at offset %d of %s after %s", context, lease, raw.offset(), key.role(), before)
                            .isGreaterThanOrEqualTo(before.producerEpoch());
                }
            }
        }
    }

    // ---------------------------------------------------------------- what the members believe

    /** Per running member, how many roles it believes it holds. */
    Map<String, Integer> shares() {
        Map<String, Integer> shares = new LinkedHashMap<>();
        members.values().stream().filter(Member::running).forEach(m -> shares.put(m.id, held(m.id)));
        return shares;
    }

    /** Whether the running members hold every role between them, their shares at most one apart. */
    boolean even() {
        Map<String, Integer> shares = shares();
        int total = shares.values().stream().mapToInt(Integer::intValue).sum();
        if (total != roles.size()) {
            return false;
        }
        int min = shares.values().stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = shares.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return max - min <= 1;
    }

    /** How many roles {@code member} believes it holds (running or not). */
    int held(String member) {
        return members.get(member).held().size();
    }

    boolean holds(String member, Role role) {
        return members.get(member).holds(role);
    }

    /** The running members that believe they hold {@code role}. */
    List<String> holders(Role role) {
        return members.values().stream()
                .filter(Member::running)
                .filter(m -> m.holds(role))
                .map(m -> m.id)
                .toList();
    }

    /** How many of {@code these} have a running holder. */
    int withHolder(List<Role> these) {
        return (int) these.stream().filter(role -> !holders(role).isEmpty()).count();
    }

    /** The handovers the members made, summed; a crashed process's count went with it. */
    long moves() {
        return members.values().stream()
                .filter(m -> !m.crashed)
                .mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut())
                .sum();
    }

    /** The longest stretch without a holder, of any role, that ended or is still open after {@code fromNanos}. */
    Duration longestGapSince(long fromNanos) {
        long now = runtime.nanoTime();
        long longest = gaps.stream()
                .filter(g -> g.to() > fromNanos)
                .mapToLong(g -> g.to() - Math.max(g.from(), fromNanos))
                .max()
                .orElse(0);
        for (long since : leaderlessSince.values()) {
            longest = Math.max(longest, now - Math.max(since, fromNanos));
        }
        return Duration.ofNanos(longest);
    }

    /** Each member's contenders, one a line: crashed or frozen, the contender's state and problem. */
    String describe() {
        StringBuilder text = new StringBuilder();
        members.values()
                .forEach(m -> m.contenders.forEach((role, c) -> text.append("\n  ")
                        .append(m.id)
                        .append(' ')
                        .append(role)
                        .append(m.crashed ? " crashed" : m.runtime.frozen ? " frozen" : "")
                        .append(' ')
                        .append(c)
                        .append(c.problem()
                                .map(p -> " problem: " + p.getMessage())
                                .orElse(""))));
        return text.toString();
    }

    /** Each role as an observer reads it from the cluster, one a line. */
    String describeRoles() {
        StringBuilder text = new StringBuilder();
        roles.forEach(role -> text.append("\n  ")
                .append(role)
                .append(": ")
                .append(new CoordinationClient(cluster.transport(topic), CONFIG, runtime)
                        .observe(role, Duration.ZERO)));
        return text.toString();
    }

    /** Milliseconds since the simulation started, as {@code +1250ms}. */
    static String at(long nanos) {
        return "+" + Duration.ofNanos(nanos - ManualRuntime.TICKER_START).toMillis() + "ms";
    }

    private String prefix() {
        String text = context.get();
        return text.isEmpty() ? "" : text + " ";
    }

    /** The newest grants, every end and each member's state: what a failure message closes with. */
    private String state() {
        List<Grant> all = List.copyOf(grants);
        List<Grant> newest = all.subList(Math.max(0, all.size() - GRANTS_SHOWN), all.size());
        String earlier = all.size() > newest.size() ? (all.size() - newest.size()) + " earlier, then " : "";
        return "; grants " + earlier + newest + "; ends " + ends + describe();
    }

    @Override
    public void close() {
        runtime.close();
    }

    // ---------------------------------------------------------------- types

    /** A grant: who, which role and term, and when (see {@link #grantsTimedAtTheGrant()}). */
    record Grant(String member, Role role, long term, long atNanos) {
        @Override
        public String toString() {
            return at(atNanos) + " " + member + " " + role.name() + " t" + term;
        }
    }

    /** The grants: a list that counts how often it was cleared, so the storm check knows to take them in again. */
    private static final class GrantLog extends CopyOnWriteArrayList<Grant> {
        private static final long serialVersionUID = 1L;
        volatile long generation;

        @Override
        public void clear() {
            generation++;
            super.clear();
        }

        @Override
        public boolean remove(Object o) {
            generation++;
            return super.remove(o);
        }

        @Override
        public Grant remove(int index) {
            generation++;
            return super.remove(index);
        }

        @Override
        public boolean removeIf(java.util.function.Predicate<? super Grant> filter) {
            generation++;
            return super.removeIf(filter);
        }

        @Override
        public boolean removeAll(Collection<?> c) {
            generation++;
            return super.removeAll(c);
        }

        @Override
        public boolean retainAll(Collection<?> c) {
            generation++;
            return super.retainAll(c);
        }
    }

    /** An end of a leadership, when its callback ran. */
    record End(long atNanos, String member, Role role, long term, LeadershipEndCause cause, Throwable failure) {
        @Override
        public String toString() {
            return at(atNanos) + " " + member + " " + role.name() + " t" + term + " " + cause
                    + (failure == null ? "" : " (" + failure.getMessage() + ")");
        }
    }

    /** A stretch {@code role} went without a running holder: from, to (simulated nanos). */
    record Gap(Role role, long from, long to) {
        Duration length() {
            return Duration.ofNanos(to - from);
        }
    }

    /**
     * What a test adds to a member it starts, beyond the plain one: the transport and
     * runtime its client uses, and what its listener does besides the recording. One
     * instance per member, so it can keep that member's own parts ({@link Member#wiring}).
     */
    interface Wiring {
        Wiring PLAIN = new Wiring() {};

        /** The transport the member's client uses; called while the member is built (id, runtime, transport set). */
        default CoordinationTransport transport(Member member) {
            return member.transport;
        }

        /** The runtime the member's client uses; called while the member is built, after {@link #transport}. */
        default CoordinationRuntime runtime(Member member) {
            return member.runtime;
        }

        /** After the grant was recorded. */
        default void granted(Member member, Role role, Leadership leadership) {}

        default void renewed(Member member, Role role, Leadership leadership, Duration took) {}
    }

    /** One process of a member. */
    final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(SimulatedMembers.this.runtime);
        /** The member's own in-memory transport (what a {@link Wiring} may wrap for the client). */
        final InMemoryCoordinationTransport transport = cluster.transport(topic);

        final Wiring wiring;
        final CoordinationClient client;
        final Map<Role, Contender> contenders = new LinkedHashMap<>();
        /** Frozen for good: the process is dead, its member comes back (if at all) as a new one. */
        volatile boolean crashed;
        /** Every contender stopped, as an application's shutdown stops them. */
        volatile boolean stopped;
        /**
         * Counted as running by the overlap check though frozen: the control of that check,
         * a member whose expiry timer never runs but that goes on believing.
         */
        volatile boolean pretendRunning;

        private Member(String id, Balance balance, List<Role> roles, Wiring wiring) {
            this.id = id;
            this.wiring = wiring;
            this.client = new CoordinationClient(wiring.transport(this), CONFIG, wiring.runtime(this)).balance(balance);
            for (Role role : roles) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        long now = SimulatedMembers.this.runtime.nanoTime();
                        // When it was granted, not when the callback ran, where a test asks (a paused member's run
                        // late).
                        long at = grantsTimedAtTheGrant
                                ? now
                                        - Duration.between(
                                                        leadership.grantedAt(),
                                                        SimulatedMembers.this
                                                                .runtime
                                                                .clock()
                                                                .instant())
                                                .toNanos()
                                : now;
                        grants.add(new Grant(id, role, leadership.term(), at));
                        wiring.granted(Member.this, role, leadership);
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add(new End(
                                SimulatedMembers.this.runtime.nanoTime(), id, role, leadership.term(), cause, failure));
                    }

                    @Override
                    public void renewed(Leadership leadership, Duration took) {
                        wiring.renewed(Member.this, role, leadership, took);
                    }
                }));
            }
        }

        /** Neither crashed, stopped nor paused. */
        boolean running() {
            return !crashed && !stopped && !runtime.frozen;
        }

        /** Whether the overlap check counts it: running, or pretending to. */
        boolean checked() {
            return running() || pretendRunning;
        }

        boolean holds(Role role) {
            Contender contender = contenders.get(role);
            return contender != null && contender.leadership().isPresent();
        }

        /** The roles it believes it holds, running or not. */
        List<Role> held() {
            return contenders.entrySet().stream()
                    .filter(e -> e.getValue().leadership().isPresent())
                    .map(Map.Entry::getKey)
                    .toList();
        }

        /** Frozen for good: nothing of it runs again. */
        void crash() {
            runtime.freeze();
            crashed = true;
        }

        /** The wiring it was started with, as the test's own type. */
        <W extends Wiring> W wiring(Class<W> type) {
            return type.cast(wiring);
        }

        @Override
        public String toString() {
            return id;
        }
    }
}

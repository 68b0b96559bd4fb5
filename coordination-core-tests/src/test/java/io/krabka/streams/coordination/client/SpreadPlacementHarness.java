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
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.testing.Intercepted;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;

/**
 * The harness of the review of the SPREAD placement (cold start, and placement after an
 * abandoned lease): whole members on one {@link ManualRuntime}, as {@link SpreadSimulationTest}
 * runs them. Checked after every tick: never two running members believing they hold one role.
 * Every grant is recorded (a device sees each as a new term), every registration a member
 * writes is counted, and every stretch a role had no holder.
 */
abstract class SpreadPlacementHarness {

    static final LeaseConfig CONFIG = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));
    static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    static final List<Role> ROLES = IntStream.range(0, 12).mapToObj(i -> Role.of("role-" + i)).toList();
    static final Duration TICK = Duration.ofMillis(50);
    /** The promise once faults stop: a holder within one lease, the capped stagger, and slack (four ticks). */
    static final Duration HOLDER_WITHIN = CONFIG.duration().plus(CONFIG.duration()).plus(TICK.multipliedBy(4));

    final ManualRuntime runtime = ManualRuntime.builder().clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(2));
    final Map<String, Member> members = new LinkedHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    final List<String> ends = new CopyOnWriteArrayList<>();
    final List<Grant> grants = new CopyOnWriteArrayList<>();
    final Map<Role, Long> leaderlessSince = new HashMap<>();
    /** Each stretch a role went without a running holder: role, from, to (simulated nanos). */
    final List<Gap> gaps = new ArrayList<>();

    record Grant(long atNanos, String member, Role role, long term) {
        @Override
        public String toString() {
            return "+" + Duration.ofNanos(atNanos - ManualRuntime.TICKER_START).toMillis() + "ms " + member + " " + role.name()
                    + " t" + term;
        }
    }

    record Gap(Role role, long from, long to) {
        Duration length() {
            return Duration.ofNanos(to - from);
        }
    }

    @AfterEach
    void closeRuntime() {
        runtime.close();
    }

    // ---------------------------------------------------------------- harness

    void startThreeEven() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        runUntil(this::even, Duration.ofSeconds(30));
        runFor(CONFIG.renewInterval().multipliedBy(3));
    }

    List<InMemoryCluster.Fault> outage(List<Integer> partitions) {
        List<InMemoryCluster.Fault> faults = new ArrayList<>();
        partitions.forEach(p -> faults.add(cluster.freezePartition(new TopicPartition(TOPIC.name(), p))));
        ROLES.stream().filter(role -> partitions.contains(members.values().iterator().next().transport.partition(role).partition()))
                .forEach(role -> faults.add(cluster.freezeCoordinator(role)));
        return faults;
    }

    /** The longest stretch without a holder, of any role, that ended or is still open after {@code fromNanos}. */
    Duration longestGapSince(long fromNanos) {
        long now = runtime.nanoTime();
        long longest = gaps.stream().filter(g -> g.to() > fromNanos).mapToLong(g -> g.to() - Math.max(g.from(), fromNanos)).max()
                .orElse(0);
        for (long since : leaderlessSince.values()) {
            longest = Math.max(longest, now - Math.max(since, fromNanos));
        }
        return Duration.ofNanos(longest);
    }

    long moves() {
        return members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();
    }

    Map<String, Integer> registrationCounts() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        members.forEach((id, m) -> counts.put(id, m.registrations.get()));
        return counts;
    }

    boolean even() {
        Map<String, Integer> shares = shares();
        int total = shares.values().stream().mapToInt(Integer::intValue).sum();
        if (total != ROLES.size()) {
            return false;
        }
        int min = shares.values().stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = shares.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return max - min <= 1;
    }

    Map<String, Integer> shares() {
        Map<String, Integer> shares = new LinkedHashMap<>();
        members.values().stream().filter(Member::running).forEach(m -> shares.put(m.id, held(m.id)));
        return shares;
    }

    int held(String member) {
        return (int) members.get(member).contenders.values().stream().filter(c -> c.leadership().isPresent()).count();
    }

    /** How many of {@code roles} have a running holder. */
    int holders(List<Role> roles) {
        return (int) roles.stream().filter(role -> members.values().stream().filter(Member::running)
                .anyMatch(m -> m.contenders.containsKey(role) && m.contenders.get(role).leadership().isPresent())).count();
    }

    Duration runUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            assertThat(Duration.ofNanos(runtime.nanoTime() - start)).as("waiting; shares %s, grants %s, ends %s", shares(), grants,
                    ends).isLessThanOrEqualTo(within);
            tick();
        }
        return Duration.ofNanos(runtime.nanoTime() - start);
    }

    void runFor(Duration duration) {
        long until = runtime.nanoTime() + duration.toNanos();
        while (runtime.nanoTime() < until) {
            tick();
        }
    }

    void tick() {
        runtime.advance(TICK);
        long now = runtime.nanoTime();
        for (Role role : ROLES) {
            List<String> holding = members.values().stream().filter(Member::running)
                    .filter(m -> m.contenders.containsKey(role) && m.contenders.get(role).leadership().isPresent()).map(m -> m.id)
                    .toList();
            if (holding.size() > 1) {
                violations.add("+" + runtime.elapsed() + " " + holding + " each believe they hold " + role);
            }
            if (holding.isEmpty()) {
                leaderlessSince.putIfAbsent(role, now);
            } else {
                Long since = leaderlessSince.remove(role);
                if (since != null) {
                    gaps.add(new Gap(role, since, now));
                }
            }
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(violations + "; ends " + ends);
        }
    }

    void start(String id, Balance balance) {
        start(id, balance, ROLES, Duration.ZERO);
    }

    void start(String id, Balance balance, List<Role> roles, Duration clockOffset) {
        Member member = new Member(id, balance, roles, clockOffset);
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
    }

    /** A member's runtime whose wall clock is {@code offset} off the shared one. */
    static final class SkewedRuntime implements CoordinationRuntime {
        private final MemberRuntime inner;
        private final InstantSource clock;

        SkewedRuntime(MemberRuntime inner, Duration offset) {
            this.inner = inner;
            this.clock = () -> inner.clock().instant().plus(offset);
        }

        @Override
        public InstantSource clock() {
            return clock;
        }

        @Override
        public long nanoTime() {
            return inner.nanoTime();
        }

        @Override
        public Executor passes() {
            return inner.passes();
        }

        @Override
        public Executor urgentPasses() {
            return inner.urgentPasses();
        }

        @Override
        public Executor renewals() {
            return inner.renewals();
        }

        @Override
        public Executor callbacks() {
            return inner.callbacks();
        }

        @Override
        public Executor workers() {
            return inner.workers();
        }

        @Override
        public boolean await(Future<?> future, Duration timeout) throws InterruptedException {
            return inner.await(future, timeout);
        }

        @Override
        public Scheduled schedule(Runnable task, Duration delay) {
            return inner.schedule(task, delay);
        }

        @Override
        public void sleep(Duration duration) throws InterruptedException {
            inner.sleep(duration);
        }

        @Override
        public void renewalBlocked() {
            inner.renewalBlocked();
        }

        @Override
        public void renewalUnblocked() {
            inner.renewalUnblocked();
        }

        @Override
        public void close() {
        }
    }

    final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(SpreadPlacementHarness.this.runtime);
        final io.krabka.streams.coordination.memory.InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        final AtomicInteger registrations = new AtomicInteger();
        final CoordinationClient client;
        final Map<Role, Contender> contenders = new LinkedHashMap<>();

        Member(String id, Balance balance, List<Role> roles, Duration clockOffset) {
            this.id = id;
            CoordinationTransport counted = Intercepted.proxy(CoordinationTransport.class, (method, args) -> {
                if (method.getName().equals("register")) {
                    registrations.incrementAndGet();
                }
                return Intercepted.call(transport, method, args);
            });
            CoordinationRuntime own = clockOffset.isZero() ? runtime : new SkewedRuntime(runtime, clockOffset);
            this.client = new CoordinationClient(counted, CONFIG, own).balance(balance);
            for (Role role : roles) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        grants.add(new Grant(SpreadPlacementHarness.this.runtime.nanoTime(), id, role, leadership.term()));
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add("+" + SpreadPlacementHarness.this.runtime.elapsed() + " " + id + " " + role + " " + cause);
                    }
                }));
            }
        }

        boolean running() {
            return !runtime.frozen;
        }
    }
}

package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.SimulatedMembers.Member;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.Intercepted;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;

/**
 * The harness of the review of the SPREAD placement (cold start, and placement after an
 * abandoned lease): whole members on one {@link ManualRuntime} ({@link SimulatedMembers}),
 * as {@link SpreadSimulationTest} runs them. Checked after every tick: never two running
 * members believing they hold one role. Every grant is recorded (a device sees each as a
 * new term), every stretch a role had no holder, and here also every registration a
 * member writes; a member may run with its wall clock off the others'.
 */
abstract class SpreadPlacementHarness {

    static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    static final List<Role> ROLES = SimulatedMembers.roles(12);
    /** The promise once faults stop: a holder within one lease, the capped stagger, and slack (four ticks). */
    static final Duration HOLDER_WITHIN = SimulatedMembers.CONFIG
            .duration()
            .plus(SimulatedMembers.CONFIG.duration())
            .plus(SimulatedMembers.TICK.multipliedBy(4));

    final SimulatedMembers sim = new SimulatedMembers(TOPIC, ROLES);

    @AfterEach
    void closeRuntime() {
        sim.close();
    }

    // ---------------------------------------------------------------- harness

    void startThreeEven() {
        start("a", Balance.SPREAD);
        start("b", Balance.SPREAD);
        start("c", Balance.SPREAD);
        sim.runUntil(sim::even, Duration.ofSeconds(30));
        sim.runFor(SimulatedMembers.CONFIG.renewInterval().multipliedBy(3));
    }

    Member start(String id, Balance balance) {
        return start(id, balance, ROLES, Duration.ZERO);
    }

    /** Member {@code id} on {@code roles}, its wall clock {@code clockOffset} off the shared one, its registrations counted. */
    Member start(String id, Balance balance, List<Role> roles, Duration clockOffset) {
        return sim.start(id, balance, roles, new Counted(clockOffset));
    }

    /** How many registrations {@code member} wrote. */
    static int registrations(Member member) {
        return member.wiring(Counted.class).registrations.get();
    }

    Map<String, Integer> registrationCounts() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        sim.members.forEach((id, m) -> counts.put(id, registrations(m)));
        return counts;
    }

    /** A member whose every registration is counted and whose wall clock may be off the shared one. */
    static final class Counted implements SimulatedMembers.Wiring {
        final AtomicInteger registrations = new AtomicInteger();
        private final Duration clockOffset;

        Counted(Duration clockOffset) {
            this.clockOffset = clockOffset;
        }

        @Override
        public CoordinationTransport transport(Member member) {
            return Intercepted.proxy(CoordinationTransport.class, (method, args) -> {
                if (method.getName().equals("register")) {
                    registrations.incrementAndGet();
                }
                return Intercepted.call(member.transport, method, args);
            });
        }

        @Override
        public CoordinationRuntime runtime(Member member) {
            return clockOffset.isZero() ? member.runtime : new SkewedRuntime(member.runtime, clockOffset);
        }
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
        public void close() {}
    }
}

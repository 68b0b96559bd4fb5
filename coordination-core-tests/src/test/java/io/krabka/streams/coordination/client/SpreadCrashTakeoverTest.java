package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.SimulatedMembers.Member;
import io.krabka.streams.coordination.testing.Intercepted;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The spread standby's read at the lease's deadline, from an outside review: four members
 * on SPREAD, twelve roles, every read counted, clocks even or skewed, role sets equal or
 * not. A holder of three roles crashes: each of its
 * roles goes to exactly one member, within a lease and the stagger; and in the quiet before
 * and after, the standbys do not read in a loop.
 */
class SpreadCrashTakeoverTest {

    static final List<Role> ROLES = SimulatedMembers.roles(12);
    final SimulatedMembers sim = new SimulatedMembers(TopicSpec.DEFAULTS.withPartitions(3), ROLES);
    final Map<String, AtomicInteger> reads = new LinkedHashMap<>();

    @AfterEach
    void close() {
        sim.close();
    }

    Member start(String id) {
        return start(id, Duration.ZERO);
    }

    Member start(String id, Duration clockOffset) {
        return start(id, clockOffset, ROLES);
    }

    Member start(String id, Duration clockOffset, List<Role> roles) {
        AtomicInteger count = reads.computeIfAbsent(id, i -> new AtomicInteger());
        return sim.start(id, Balance.SPREAD, roles, new SimulatedMembers.Wiring() {
            @Override
            public CoordinationTransport transport(Member member) {
                return Intercepted.proxy(CoordinationTransport.class, (method, args) -> {
                    if (method.getName().equals("read") || method.getName().equals("readAll")) {
                        count.incrementAndGet();
                    }
                    return Intercepted.call(member.transport, method, args);
                });
            }

            @Override
            public io.krabka.streams.coordination.runtime.CoordinationRuntime runtime(Member member) {
                return clockOffset.isZero()
                        ? member.runtime
                        : new SpreadPlacementHarness.SkewedRuntime(member.runtime, clockOffset);
            }
        });
    }

    Map<String, Integer> readsNow() {
        return reads.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get(), (a, b) -> a, LinkedHashMap::new));
    }

    @Test
    void aCrashedHoldersRolesGoEachToOneMemberAndQuietStandbysDoNotReadInALoop() {
        crashAfterAQuietStretch(
                Duration.ZERO, Duration.ofSeconds(30), CONFIG.duration().multipliedBy(3));
    }

    @Test
    void aHolderWithItsClockAheadCrashesAndItsRolesGoEachToOneMember() {
        crashAfterAQuietStretch(
                Duration.ofSeconds(7), Duration.ofSeconds(60), CONFIG.duration().multipliedBy(4));
    }

    @Test
    void aHolderWithItsClockBehindCrashesAndItsRolesGoEachToOneMember() {
        crashAfterAQuietStretch(
                Duration.ofSeconds(-1),
                Duration.ofSeconds(60),
                CONFIG.duration().multipliedBy(4));
    }

    /**
     * Four members, a's clock {@code offset} from the others': once even, a quiet stretch of
     * ten leases in which the standbys do not read in a loop, then a crashes and each of its
     * roles is granted once, every role held again within {@code takeoverWithin}.
     */
    private void crashAfterAQuietStretch(Duration offset, Duration evenWithin, Duration takeoverWithin) {
        start("a", offset);
        for (String id : List.of("b", "c", "d")) {
            start(id);
        }
        sim.runUntil(sim::even, evenWithin);
        sim.runFor(CONFIG.duration().multipliedBy(5));
        Map<String, Integer> before = readsNow();
        Duration quiet = CONFIG.duration().multipliedBy(10);
        sim.runFor(quiet);
        Map<String, Integer> after = readsNow();
        System.out.printf(
                "SPREAD CRASH clock of a %s: quiet reads %s -> %s, shares %s%n", offset, before, after, sim.shares());
        crashAndTakeOverOnce("a", takeoverWithin);
        // Each member's standby passes for up to 9 roles over 10 leases: a read per role per
        // lease would be 90; a loop would be thousands.
        for (String id : List.of("b", "c", "d")) {
            assertThat(after.get(id) - before.get(id))
                    .as("reads of %s in a quiet %s", id, quiet)
                    .isLessThan(200);
        }
    }

    /** Crashes {@code victim}: every role is held again within {@code within}, and each of its roles was granted once. */
    private void crashAndTakeOverOnce(String victim, Duration within) {
        List<Role> orphans = ROLES.stream().filter(r -> sim.holds(victim, r)).toList();
        int grantsBefore = sim.grants.size();
        long crashedAt = sim.runtime.nanoTime();
        Map<String, Integer> before = readsNow();
        sim.members.get(victim).crash();
        Duration took = sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), within);
        sim.runFor(CONFIG.duration().multipliedBy(10));
        List<SimulatedMembers.Grant> since = sim.grants.subList(grantsBefore, sim.grants.size());
        System.out.printf(
                "SPREAD CRASH crash of %s (%s): all held after %s, grants since %s, shares %s, reads %s -> %s,"
                        + " longest gap %s%n",
                victim, orphans, took, since, sim.shares(), before, readsNow(), sim.longestGapSince(crashedAt));
        assertThat(sim.violations).isEmpty();
        for (Role role : orphans) {
            assertThat(since.stream().filter(g -> g.role().equals(role)).count())
                    .as("grants of %s after the crash: %s", role, since)
                    .isEqualTo(1);
        }
    }

    /** Members on different role sets (their share views differ): a crash of a full member. */
    @Test
    void differentRoleSetsACrashedHoldersRolesGoEachToOneMember() {
        start("a", Duration.ZERO, ROLES.subList(0, 4));
        for (String id : List.of("b", "c", "d")) {
            start(id);
        }
        sim.runUntil(() -> sim.withHolder(ROLES) == ROLES.size(), Duration.ofSeconds(60));
        sim.runFor(CONFIG.duration().multipliedBy(10));
        crashAndTakeOverOnce("b", CONFIG.duration().multipliedBy(4));
    }
}

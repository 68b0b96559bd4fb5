package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.SimulatedMembers.Grant;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Balance#SPREAD} among members that contend for different sets of roles (a rolling
 * deploy that adds a role makes them): the moves stop once the shares settle, whatever
 * the sets. Whole members on one {@link ManualRuntime} ({@link SimulatedMembers}), as in
 * {@link SpreadSimulationTest}; never two of them believing they hold one role at any tick.
 */
class SpreadOverDifferentRoleSetsSimulationTest {

    private static final List<Role> ROLES = SimulatedMembers.roles(12);
    /** How long the members run after the last one joined: many settles and leases. */
    private static final Duration RUN = Duration.ofSeconds(60);
    /** The tail of the run that must see no grant: the shares settled long before. */
    private static final Duration QUIET = Duration.ofSeconds(30);

    private final SimulatedMembers sim = new SimulatedMembers(TopicSpec.DEFAULTS.withPartitions(3), ROLES);

    @AfterEach
    void close() {
        sim.close();
    }

    /**
     * b contends for eight roles, a for four of them. Counted over its own roles, a sees b
     * hold none of the shared four and hands it two; b, counting over its eight, then sees
     * a two below it and hands two back, and so on for ever.
     */
    @Test
    void aMemberOnASubsetOfTheRolesAndOneOnAllOfThemStopMovingOnceTheSharedRolesAreEven() {
        List<Role> shared = ROLES.subList(0, 4);
        sim.start("a", Balance.SPREAD, shared);
        sim.runUntil(() -> sim.held("a") == 4, Duration.ofSeconds(10));
        sim.start("b", Balance.SPREAD, ROLES.subList(0, 8));

        long joined = sim.runtime.nanoTime();
        sim.runFor(RUN);

        assertSettled(joined, 4);
        // The shared roles are even between the two; b holds the four only it contends for.
        int bShared = (int) shared.stream().filter(role -> sim.holds("b", role)).count();
        assertThat(Math.abs(sim.held("a") - bShared))
                .as("shared roles: a %s, b %s", sim.held("a"), bShared)
                .isLessThanOrEqualTo(1);
        assertThat(sim.held("a") + sim.held("b")).isEqualTo(8);
    }

    /**
     * Three members on overlapping sets, with roles two of them contend for and roles all
     * three do: a on roles 0-8, b on 3-11, c on 0-2 and 6-11.
     */
    @Test
    void threeMembersOnOverlappingRoleSetsStopMovingOnceTheSharesSettle() {
        sim.start("a", Balance.SPREAD, ROLES.subList(0, 9));
        sim.runUntil(() -> sim.held("a") == 9, Duration.ofSeconds(10));
        sim.start("b", Balance.SPREAD, ROLES.subList(3, 12));
        List<Role> cRoles = new ArrayList<>(ROLES.subList(0, 3));
        cRoles.addAll(ROLES.subList(6, 12));
        sim.start("c", Balance.SPREAD, cRoles);

        long joined = sim.runtime.nanoTime();
        sim.runFor(RUN);

        assertSettled(joined, 12);
        assertThat(sim.held("a") + sim.held("b") + sim.held("c")).isEqualTo(ROLES.size());
        // Roles 6-8 are the only ones all three contend for; the others spread too.
        assertThat(sim.members.keySet())
                .allSatisfy(id -> assertThat(sim.held(id))
                        .as("%s holds some: %s", id, sim.shares())
                        .isPositive());
    }

    /** No grant in the last {@link #QUIET} of the run, and no more handovers than the roles that may move. */
    private void assertSettled(long joinedNanos, int roles) {
        long end = sim.runtime.nanoTime();
        List<Grant> afterJoin =
                sim.grants.stream().filter(g -> g.atNanos() >= joinedNanos).toList();
        List<Grant> late = afterJoin.stream()
                .filter(g -> end - g.atNanos() < QUIET.toNanos())
                .toList();
        long moves = sim.moves();
        String summary = String.format(
                "%d grants and %d handovers in %s after the join, %d in the last %s; shares %s",
                afterJoin.size(), moves, Duration.ofNanos(end - joinedNanos), late.size(), QUIET, sim.shares());
        assertThat(late).as(summary).isEmpty();
        assertThat(moves).as(summary).isLessThanOrEqualTo(roles);
        assertThat(sim.violations).isEmpty();
    }
}

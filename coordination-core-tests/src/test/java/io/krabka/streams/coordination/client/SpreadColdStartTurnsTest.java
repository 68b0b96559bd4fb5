package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.client.SimulatedMembers.CONFIG;
import static io.krabka.streams.coordination.client.SimulatedMembers.TICK;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Three members started together on three roles under {@link Balance#SPREAD}, with role
 * names whose spread orders put one member first for two roles and the member left over
 * last for the one it must take (ColdStartSpreadIT failed on such names on a busy machine).
 * The first member takes one role and goes to the back of the other's order; the member
 * left over, which counted its place before that, must look again and take the role
 * before the members at their share have their turn. Counted only at its own turn (the
 * stagger's cap), it challenged together with them, and on a real broker the last
 * InitProducerId, a full member's, won: one member held two roles, another none.
 */
class SpreadColdStartTurnsTest {

    @ParameterizedTest(name = "roles of run {0}")
    @ValueSource(strings = {"285c06c6", "3c6ef362", "17156075", "538453d7", "8ff34739", "cc623a9b", "a708a7ae"})
    void theMemberLeftOverTakesItsRoleBeforeTheMembersAtTheirShareHaveTheirTurn(String run) {
        List<Role> roles =
                List.of(Role.of("rollout-eu-" + run), Role.of("rollout-us-" + run), Role.of("rollout-ap-" + run));
        try (SimulatedMembers sim = new SimulatedMembers(TopicSpec.DEFAULTS.withPartitions(3), roles)) {
            sim.start("cp-1", Balance.SPREAD);
            sim.start("cp-2", Balance.SPREAD);
            sim.start("cp-3", Balance.SPREAD);
            // The placement anchor is one stagger after the registrations; the members at their
            // share go at the earliest two staggers after it.
            Duration beforeFullTurns = CONFIG.challengeStagger().multipliedBy(3).minus(TICK.multipliedBy(2));
            Duration took = sim.runUntil(
                    () -> sim.held("cp-1") + sim.held("cp-2") + sim.held("cp-3") == roles.size(), beforeFullTurns);
            sim.runFor(CONFIG.duration().multipliedBy(3));
            assertThat(sim.shares())
                    .as("after %s: grants %s", took, sim.grants)
                    .containsOnly(Map.entry("cp-1", 1), Map.entry("cp-2", 1), Map.entry("cp-3", 1));
            assertThat(sim.grants).as("each role granted once").hasSize(roles.size());
            assertThat(sim.violations).isEmpty();
        }
    }
}

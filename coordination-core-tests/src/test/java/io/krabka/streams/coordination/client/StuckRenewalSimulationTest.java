package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * One started member holding twelve roles on a manual runtime with only two renewal
 * threads, while the transaction coordinator of four of them freezes (their renewals
 * block for the whole operation timeout, far past the lease): the other eight keep
 * renewing on time, because a renewal blocked past 500 ms is reported to the runtime,
 * which runs the next role's renewal beside it. The same runtime without that growth
 * starves the healthy roles: the control shows the check can fail.
 */
class StuckRenewalSimulationTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
    private static final List<Role> ROLES =
            IntStream.range(0, 12).mapToObj(i -> Role.of("role-" + i)).toList();
    private static final List<Role> FROZEN = ROLES.subList(0, 4);

    @Test
    void rolesWhoseCoordinatorFreezesEndAtTheirDeadlineAndNoOtherRoleIsHeldUp() {
        Map<Role, LeadershipEndCause> ends =
                run(ManualRuntime.builder().renewalThreads(2).build());

        assertThat(ends).as("ends").containsOnlyKeys(FROZEN);
        assertThat(ends.values()).containsOnly(LeadershipEndCause.EXPIRED);
    }

    @Test
    void withoutMoreThreadsForBlockedRenewalsTheHealthyRolesStarve() {
        Map<Role, LeadershipEndCause> ends = run(
                ManualRuntime.builder().renewalThreads(2).fixedRenewalThreads().build());

        assertThat(ends.keySet()).as("healthy roles that ended").containsAnyElementsOf(ROLES.subList(4, ROLES.size()));
    }

    private static Map<Role, LeadershipEndCause> run(ManualRuntime runtime) {
        try (runtime) {
            InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(30));
            CoordinationClient client =
                    new CoordinationClient(cluster.transport(TopicSpec.DEFAULTS.withPartitions(2)), CONFIG, runtime);
            HoldingMember member = HoldingMember.holdingAll(runtime, client, ROLES);

            FROZEN.forEach(cluster::freezeCoordinator);
            runtime.advance(CONFIG.duration().multipliedBy(4));
            return Map.copyOf(member.ends());
        }
    }
}

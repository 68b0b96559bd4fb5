package io.krabka.coordination.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.coordination.chaos.harness.ChaosRun;
import io.krabka.coordination.chaos.harness.FaultKind;
import io.krabka.coordination.chaos.harness.FaultPlan;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fault plan against three broker JVMs and several member JVMs: no deposed leader
 * gets a command committed, and the role never stays leaderless beyond the bound.
 *
 * <p>{@code -Dchaos.plan=smoke} (the default build): every fault kind once, about a
 * minute. {@code -Dchaos.plan=full} ({@code ./mvnw -B verify -Pchaos}): a seeded random
 * plan for about 28 minutes, five members. {@code -Dchaos.seed} replays a plan;
 * {@code -Dchaos.brokers=1} runs against a single broker (no broker kills).
 */
class ChaosIT {

    static final List<FaultKind> ALL_FAULTS = Arrays.asList(FaultKind.values());
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration RENEW = Duration.ofMillis(500);
    static final Duration STAGGER = Duration.ofMillis(500);
    /**
     * Room beyond lease + stagger x standbys: a commit in flight when a broker dies waits
     * up to the brokers' request timeout for its markers (docs/RELIABILITY.md), and two
     * cores run up to nine JVMs (2 s).
     */
    static final Duration SLACK = KafkaProcessCluster.BROKER_REQUEST_TIMEOUT.plusSeconds(2);

    @Test
    void noDeposedLeaderGetsACommandCommittedUnderFaults() throws Exception {
        String plan = System.getProperty("chaos.plan", "smoke");
        long seed = Long.getLong("chaos.seed", 20261129L);
        int brokers = Integer.getInteger("chaos.brokers", 3);
        Path target = Path.of(System.getProperty("chaos.target", "target"));
        boolean full = plan.equals("full");
        // With one broker, killing it is a full outage, not a fault the product can ride out.
        List<FaultKind> faults = brokers >= 3 ? ALL_FAULTS
                : ALL_FAULTS.stream().filter(kind -> kind != FaultKind.KILL_BROKER).toList();
        ChaosRun.Settings settings = full
                ? new ChaosRun.Settings("full", brokers, 5, LEASE, RENEW, STAGGER, SLACK,
                        FaultPlan.random(seed, faults, 2000, LEASE.toMillis()), Duration.ofMinutes(28), List.of(),
                        target.resolve("chaos-full"))
                : new ChaosRun.Settings("smoke", brokers, 3, LEASE, RENEW, STAGGER, SLACK,
                        FaultPlan.eachOnce(seed, faults, LEASE.toMillis()), Duration.ofMinutes(3), List.of(),
                        target.resolve("chaos-smoke"));

        ChaosRun.Report report = new ChaosRun(settings).run();
        System.out.println(report.table());

        assertThat(report.result().violations()).as("violations (details in %s/report.md)", report.dir()).isEmpty();
        assertThat(report.faultCounts()).as("every kind of fault ran").containsKeys(
                faults.stream().map(Enum::name).toArray(String[]::new));
        assertThat(report.faultCounts()).as("the plan never waited in vain for a holder").doesNotContainKey("STUCK");
        assertThat(report.result().leadershipChanges()).isGreaterThanOrEqualTo(full ? 200 : 3);
        assertThat(report.result().commandsCommitted()).isPositive();
    }
}

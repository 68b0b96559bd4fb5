package io.krabka.coordination.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.coordination.chaos.check.Violation;
import io.krabka.coordination.chaos.harness.ChaosRun;
import io.krabka.coordination.chaos.harness.FaultKind;
import io.krabka.coordination.chaos.harness.FaultPlan;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Before trusting the checker, show it can fail: the zombie plan (the holder frozen
 * past its lease, then thawed) against a member that writes its commands with a plain
 * producer instead of the role's transactional one. The same plan against the real
 * member is the control.
 */
class UnfencedMemberIsCaughtIT {

    private static final FaultPlan ZOMBIE = zombie(2500);

    /**
     * The zombie plan with {@code calmMillis} after the thaw. The unfenced member gets up to
     * 8 s: frozen in the middle of a renewal, it first finishes that (a fenced commit whose
     * outcome it resolves), and a run that ended 2.5 s after the thaw once caught it before
     * it had dispatched anything. The harness ends that calm as soon as the zombie's commits
     * after the new holder's are in the log (ChaosRun's calm), usually within a second.
     */
    private static FaultPlan zombie(long calmMillis) {
        return new FaultPlan(1L, List.of(new FaultPlan.Step(FaultKind.PAUSE_LEADER, 500, calmMillis, false)));
    }

    private static ChaosRun.Settings settings(String name, List<String> unfenced, FaultPlan plan) {
        Path target = Path.of(System.getProperty("chaos.target", "target"));
        return new ChaosRun.Settings(
                name,
                1,
                2,
                ChaosIT.LEASE,
                ChaosIT.RENEW,
                ChaosIT.STAGGER,
                ChaosIT.SLACK,
                plan,
                java.time.Duration.ofMinutes(2),
                unfenced,
                target.resolve("chaos-" + name));
    }

    @Test
    void aThawedZombieWritingOutsideTheRolesTransactionsIsReportedAsAStaleDispatch() throws Exception {
        ChaosRun.Report report = new ChaosRun(settings("unfenced", List.of("m1"), zombie(8000))).run();
        System.out.println(report.table());

        List<Violation> violations = report.result().violations();
        assertThat(violations)
                .extracting(Violation::kind)
                .contains(Violation.Kind.STALE_DISPATCH, Violation.Kind.TERM_BACKWARDS);
        assertThat(violations)
                .filteredOn(v -> v.kind() == Violation.Kind.STALE_DISPATCH)
                .allSatisfy(v -> assertThat(v.evidence()).contains("member=m1"));
    }

    /** On a transaction-version-1 cluster: the default build's brief run of the plan on TV1. */
    @Test
    void theSameZombieWithTheRolesProducerIsFencedAndNothingIsReported() throws Exception {
        ChaosRun.Report report =
                new ChaosRun(settings("fenced-control", List.of(), ZOMBIE).withTransactionVersion(1)).run();
        System.out.println(report.table());

        assertThat(report.result().violations()).isEmpty();
        assertThat(report.result().leadershipChanges()).isGreaterThanOrEqualTo(1);
    }
}

package io.krabka.streams.coordination.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.Role;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The report's verdict, the scratch id's shape and the connection estimate's threshold; the checks themselves run on brokers (FencingProbeIT). */
class FencingReportTest {

    private static FencingReport report(ProbeCheck... checks) {
        return new FencingReport("c", "b:9092", "t", null, null, true, Instant.EPOCH, 1, List.of(checks));
    }

    @Test
    void theStatusIsTheWorstCheckAndASkippedCheckCountsAsNothing() {
        ProbeCheck pass = ProbeCheck.pass("a", "fine", "means");
        ProbeCheck skipped = ProbeCheck.skipped("b", "not checked (read-only)", "means");
        ProbeCheck warn = ProbeCheck.warn("c", "close", "means", "fix it");
        ProbeCheck fail = ProbeCheck.fail("d", "broken", "means", "fix it");
        assertThat(report(pass, skipped).status()).isEqualTo(ProbeStatus.PASS);
        assertThat(report(pass, skipped, warn).status()).isEqualTo(ProbeStatus.WARN);
        assertThat(report(fail, warn, pass).status()).isEqualTo(ProbeStatus.FAIL);
        assertThat(report(pass, skipped).requireNoFailure()).isNotNull();
        assertThatThrownBy(() -> report(pass, fail).requireNoFailure())
                .isInstanceOf(FencingProbeException.class)
                .hasMessage("the fencing probe of cluster c failed 1 check: d FAIL: broken. means. Fix: fix it");
    }

    @Test
    void anUnsafeSettingFailsUnlessAllowedThenWarnsSayingSo() {
        assertThat(ProbeCheck.unsafe(false, "x", "rf 1", "means", "fix").status())
                .isEqualTo(ProbeStatus.FAIL);
        ProbeCheck allowed = ProbeCheck.unsafe(true, "x", "rf 1", "means", "fix");
        assertThat(allowed.status()).isEqualTo(ProbeStatus.WARN);
        assertThat(allowed.finding())
                .isEqualTo("rf 1 (accepted: unsafe settings are allowed on this development cluster)");
    }

    @Test
    void theScratchTransactionalIdIsNewEachRunAndAValidIdForEveryTopicName() {
        String first = LiveChecks.scratchId("__coordination_state");
        assertThat(first).matches("__coordination_state-probe-[0-9a-f]{8}");
        assertThat(LiveChecks.scratchId("__coordination_state")).isNotEqualTo(first);
        String longest = LiveChecks.scratchId("t".repeat(249));
        assertThat(longest).hasSize(Role.MAX_ROLE_LEN).matches("t+-probe-[0-9a-f]{8}");
        assertThat(Role.of(longest).name()).isEqualTo(longest);
    }

    @Test
    void theConnectionEstimateWarnsAboveAHundredClientsAMember() {
        assertThat(ConnectionEstimate.check(0).status()).isEqualTo(ProbeStatus.PASS);
        assertThat(ConnectionEstimate.check(92).finding()).startsWith("a member of 92 roles opens up to 100 clients");
        assertThat(ConnectionEstimate.check(92).status()).isEqualTo(ProbeStatus.PASS);
        assertThat(ConnectionEstimate.check(93).status()).isEqualTo(ProbeStatus.WARN);
    }

    @Test
    void anEpochDisagreementWhileTheLevelChangedIsAWarnNotAFail() {
        List<ProbeCheck> live = List.of(
                ProbeCheck.pass("live-fence", "fenced", "means"),
                ProbeCheck.fail("epoch-behaviour", "2 to 2, but transaction.version=2 says +1", "means", "fix"));
        assertThat(EpochBehaviour.recheck("epoch-behaviour", live, (short) 2, () -> (short) 2))
                .isEqualTo(live);
        List<ProbeCheck> changed = EpochBehaviour.recheck("epoch-behaviour", live, (short) 2, () -> (short) 1);
        assertThat(changed.get(0)).isEqualTo(live.get(0));
        assertThat(changed.get(1).status()).isEqualTo(ProbeStatus.WARN);
        assertThat(changed.get(1).finding())
                .endsWith("; transaction.version reads 1 now: it changed while the probe ran");
    }
}

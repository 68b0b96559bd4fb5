package io.krabka.streams.coordination.succession;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The standby's turn as one pure function: what a member may believe of a lease or a release it saw. */
class SightedTest {

    private static final LeaseConfig CONFIG = LeaseConfig.DEFAULTS; // 30 s lease, 10 s renew, 5 s stagger
    private static final long LEASE = CONFIG.duration().toMillis();
    private static final Role ROLE = Role.of("controller");
    private static final MemberId HOLDER = MemberId.of("holder");
    private static final MemberId ME = MemberId.of("me");
    private static final long T0 = 1_700_000_000_000L;

    /** A role held by HOLDER with a lease written at T0 ending at {@code deadline}, and ME registered behind it. */
    private static RoleState leased(long deadline) {
        return RoleState.builder(ROLE)
                .register(0, HOLDER, T0 - 1_000)
                .register(1, ME, T0 - 500)
                .lease(2, HOLDER, 7, (short) 0, T0, deadline)
                .build();
    }

    private static long believedDeadline(RoleState state, Sighted seen) {
        return seen.believed(state, CONFIG).lease().orElseThrow().deadline();
    }

    @Test
    void aPlausibleLeaseIsBelievedAsWritten() {
        RoleState state = leased(T0 + LEASE);
        Sighted seen = new Sighted(T0 + 100, Sighted.NONE, Sighted.NONE, Sighted.NONE);

        assertThat(seen.believed(state, CONFIG)).isSameAs(state);
    }

    @Test
    void aDeadlineFurtherThanOneLeaseAfterTheSightingIsCutThere() {
        RoleState forged = leased(Long.MAX_VALUE - 1);
        Sighted seen = new Sighted(T0 + 100, Sighted.NONE, Sighted.NONE, Sighted.NONE);

        assertThat(believedDeadline(forged, seen)).isEqualTo(T0 + 100 + LEASE);
    }

    @Test
    void aLaterRecordWithAnEarlierDeadlineNeverShortensTheWait() {
        // A forgery naming the holder with a deadline already past, after a lease that was bounded at T0 + LEASE.
        RoleState past = leased(T0 - 10_000);
        Sighted seen = new Sighted(T0 + 200, T0 + LEASE, Sighted.NONE, Sighted.NONE);

        assertThat(believedDeadline(past, seen)).isEqualTo(T0 + LEASE);
    }

    @Test
    void renewalsSeenInTheNewsMoveTheDeadlineAndTheTurnLater() {
        RoleState state = leased(T0 + LEASE);
        Sighted read = new Sighted(T0 + 100, Sighted.NONE, Sighted.NONE, Sighted.NONE);
        Sighted renewed = read.renewedUntil(T0 + 10_000 + LEASE);
        Instant now = Instant.ofEpochMilli(T0 + LEASE + 1);

        assertThat(read.turn(state, ME, CONFIG, now, null)).isInstanceOf(Decision.Challenge.class);
        Decision later = renewed.turn(state, ME, CONFIG, now, null);
        assertThat(later).isInstanceOf(Decision.Wait.class);
        assertThat(((Decision.Wait) later).challengeAt()).isEqualTo(Instant.ofEpochMilli(T0 + 10_000 + LEASE));
        assertThat(renewed.renewedUntil(T0).renewedUntil())
                .as("renewals never move the deadline back")
                .isEqualTo(T0 + 10_000 + LEASE);
    }

    @Test
    void theDelayOfAWaitIsHowFarRenewalsMovedTheDeadlineItWasDecidedOn() {
        LeaseState decidedOn = leased(T0 + LEASE).lease().orElseThrow();

        assertThat(Sighted.renewalDelay(decidedOn, T0 + LEASE + 4_000)).isEqualTo(Duration.ofSeconds(4));
        assertThat(Sighted.renewalDelay(decidedOn, T0 + 1_000)).isZero();
        assertThat(Sighted.renewalDelay(decidedOn, Sighted.NONE)).isZero();
        assertThat(Sighted.renewalDelay(null, T0 + LEASE + 4_000)).isZero();
    }

    @Test
    void aReleaseStampedAfterItWasSeenCountsFromTheSighting() {
        RoleState released = RoleState.builder(ROLE)
                .register(0, ME, T0 - 500)
                .lease(1, HOLDER, 7, (short) 0, T0, T0 + LEASE)
                .release(2, T0 + 3_600_000)
                .build();
        Sighted seen = new Sighted(Sighted.NONE, Sighted.NONE, T0 + 50, Sighted.NONE);

        assertThat(seen.believed(released, CONFIG).leaseReleasedAt()).hasValue(T0 + 50);
        Decision turn = seen.turn(released, ME, CONFIG, Instant.ofEpochMilli(T0 + 60), null);
        assertThat(turn)
                .as("the only standby takes a released role at once, not in an hour")
                .isInstanceOf(Decision.Challenge.class);
    }

    @Test
    void aReleaseStampedBeforeItWasSeenIsBelievedAsWritten() {
        RoleState released =
                RoleState.builder(ROLE).register(0, ME, T0 - 500).release(1, T0).build();

        assertThat(new Sighted(Sighted.NONE, Sighted.NONE, T0 + 50, Sighted.NONE).believed(released, CONFIG))
                .isSameAs(released);
        assertThat(Sighted.NOTHING.believed(released, CONFIG)).isSameAs(released);
    }
}

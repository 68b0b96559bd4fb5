package io.krabka.streams.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.krabka.streams.coordination.test.runtime.ManualClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class LeaseConfigTest {

    @Test
    void defaultsAreThirtyTenAndFiveSeconds() {
        assertThat(LeaseConfig.DEFAULTS.duration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(LeaseConfig.DEFAULTS.renewInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(LeaseConfig.DEFAULTS.challengeStagger()).isEqualTo(Duration.ofSeconds(5));
        assertThat(LeaseConfig.DEFAULTS.renewsWithMargin()).isTrue();
    }

    @Test
    void renewsWithMarginIsTrueUpToAThirdOfTheDuration() {
        LeaseConfig config = LeaseConfig.DEFAULTS;
        assertThat(config.withRenewInterval(Duration.ofMillis(10_000)).renewsWithMargin())
                .isTrue();
        assertThat(config.withRenewInterval(Duration.ofMillis(10_001)).renewsWithMargin())
                .isFalse();
        assertThat(config.withDuration(Duration.ofSeconds(6))
                        .withRenewInterval(Duration.ofSeconds(2))
                        .renewsWithMargin())
                .isTrue();
    }

    @Test
    void nonPositiveTimingsAreRejectedNamingTheField() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> LeaseConfig.DEFAULTS.withDuration(Duration.ZERO))
                .withMessage("duration must be positive, but is PT0S");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> LeaseConfig.DEFAULTS.withRenewInterval(Duration.ofSeconds(-1)))
                .withMessageStartingWith("renewInterval must be positive");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> LeaseConfig.DEFAULTS.withChallengeStagger(Duration.ofMillis(-1)))
                .withMessageStartingWith("challengeStagger must not be negative");
        assertThatNullPointerException()
                .isThrownBy(() -> LeaseConfig.DEFAULTS.withDuration(null))
                .withMessageContaining("duration");
    }

    @Test
    void zeroStaggerIsAllowedBecauseSimultaneousChallengesAreStillSafe() {
        assertThat(LeaseConfig.DEFAULTS.withChallengeStagger(Duration.ZERO).challengeStagger())
                .isZero();
    }

    @Test
    void manualClockMovesOnlyWhenTold() {
        ManualClock clock = new ManualClock(Instant.EPOCH);
        assertThat(clock.instant()).isEqualTo(Instant.EPOCH);
        assertThat(clock.advance(Duration.ofSeconds(3))).isEqualTo(Instant.ofEpochSecond(3));
        assertThat(clock.millis()).isEqualTo(3000);
        assertThatIllegalArgumentException().isThrownBy(() -> clock.advance(Duration.ofSeconds(-1)));
        clock.set(Instant.ofEpochSecond(1));
        assertThat(clock.instant()).isEqualTo(Instant.ofEpochSecond(1));
    }
}

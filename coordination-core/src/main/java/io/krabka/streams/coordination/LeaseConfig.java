package io.krabka.streams.coordination;

import java.time.Duration;
import java.util.Objects;

/**
 * The three timings of a lease. The lease is an anti-flap device, not a safety one:
 * it tells a standby when to stop waiting for a quiet holder. A wrong value makes a
 * failover early or late; it never makes two writers authoritative.
 *
 * @param duration how long a lease lasts after it is written; a standby does not
 *     challenge before the holder's deadline
 * @param renewInterval how long after writing a lease the holder writes the next one
 * @param challengeStagger how much later than the standby ahead of it a standby
 *     challenges; rank n challenges at {@code deadline + n * challengeStagger}. Zero
 *     lets every standby challenge at once, which is still safe.
 */
public record LeaseConfig(Duration duration, Duration renewInterval, Duration challengeStagger) {

    /** Default lease duration: 30 s. */
    public static final Duration DEFAULT_LEASE_DURATION = Duration.ofSeconds(30);
    /** Default renew interval: 10 s. */
    public static final Duration DEFAULT_RENEW_INTERVAL = Duration.ofSeconds(10);
    /** Default challenge stagger: 5 s. */
    public static final Duration DEFAULT_CHALLENGE_STAGGER = Duration.ofSeconds(5);

    /** The defaults: a 30 s lease renewed every 10 s, standbys 5 s apart. */
    public static final LeaseConfig DEFAULTS =
            new LeaseConfig(DEFAULT_LEASE_DURATION, DEFAULT_RENEW_INTERVAL, DEFAULT_CHALLENGE_STAGGER);

    /**
     * Validates the timings.
     *
     * @throws IllegalArgumentException naming the field when a duration or renew
     *     interval is not positive, or the stagger is negative
     */
    public LeaseConfig {
        requirePositive("duration", duration);
        requirePositive("renewInterval", renewInterval);
        Objects.requireNonNull(challengeStagger, "challengeStagger must not be null");
        if (challengeStagger.isNegative()) {
            throw new IllegalArgumentException("challengeStagger must not be negative, but is " + challengeStagger);
        }
    }

    /**
     * Whether the renew interval is at most a third of the duration, so the holder has
     * two more attempts before its deadline passes.
     */
    public boolean renewsWithMargin() {
        return renewInterval.multipliedBy(3).compareTo(duration) <= 0;
    }

    /** Returns a copy with another duration. */
    public LeaseConfig withDuration(Duration newDuration) {
        return new LeaseConfig(newDuration, renewInterval, challengeStagger);
    }

    /** Returns a copy with another renew interval. */
    public LeaseConfig withRenewInterval(Duration newRenewInterval) {
        return new LeaseConfig(duration, newRenewInterval, challengeStagger);
    }

    /** Returns a copy with another challenge stagger. */
    public LeaseConfig withChallengeStagger(Duration newChallengeStagger) {
        return new LeaseConfig(duration, renewInterval, newChallengeStagger);
    }

    private static void requirePositive(String field, Duration value) {
        Objects.requireNonNull(value, field + " must not be null");
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, but is " + value);
        }
    }
}

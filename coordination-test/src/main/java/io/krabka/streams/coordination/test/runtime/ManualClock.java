package io.krabka.streams.coordination.test.runtime;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An {@link InstantSource} that moves only when told to. Tests drive leases, renewals
 * and failovers with it instead of sleeping. Safe to share between threads.
 */
public final class ManualClock implements InstantSource {

    private final AtomicReference<Instant> now;

    /** Starts the clock at {@code start}. */
    public ManualClock(Instant start) {
        this.now = new AtomicReference<>(Objects.requireNonNull(start, "start"));
    }

    /** Starts the clock at 2023-11-14T22:13:20Z (epoch millisecond 1 700 000 000 000). */
    public ManualClock() {
        this(Instant.ofEpochMilli(1_700_000_000_000L));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    /** Moves the clock forward by {@code step}; a negative step is refused. */
    public Instant advance(Duration step) {
        if (step.isNegative()) {
            throw new IllegalArgumentException("a ManualClock only moves forward, not by " + step);
        }
        return now.updateAndGet(current -> current.plus(step));
    }

    /** Sets the clock to {@code instant}, forwards or backwards (to model a clock step). */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }
}

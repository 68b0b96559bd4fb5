package io.krabka.streams.coordination.runtime;

import java.time.InstantSource;
import java.util.Objects;

/** A runtime on another wall clock (a member's skewed clock, a test's manual one); closes nothing. */
final class ClockedRuntime extends ForwardingCoordinationRuntime {

    private final InstantSource clock;

    ClockedRuntime(CoordinationRuntime delegate, InstantSource clock) {
        super(
                delegate instanceof ClockedRuntime clocked
                        ? clocked.delegate()
                        : Objects.requireNonNull(delegate, "runtime"));
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public InstantSource clock() {
        return clock;
    }

    @Override
    public void close() {
        // The executors belong to the runtime this one wraps.
    }

    @Override
    public String toString() {
        return delegate() + " on " + clock;
    }
}

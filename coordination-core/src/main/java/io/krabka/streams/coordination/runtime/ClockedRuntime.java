package io.krabka.streams.coordination.runtime;

import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;

/** A runtime on another wall clock (a member's skewed clock, a test's manual one); closes nothing. */
final class ClockedRuntime implements CoordinationRuntime {

    private final CoordinationRuntime delegate;
    private final InstantSource clock;

    ClockedRuntime(CoordinationRuntime delegate, InstantSource clock) {
        this.delegate = delegate instanceof ClockedRuntime clocked ? clocked.delegate : Objects.requireNonNull(delegate, "runtime");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public InstantSource clock() {
        return clock;
    }

    @Override
    public long nanoTime() {
        return delegate.nanoTime();
    }

    @Override
    public Executor passes() {
        return delegate.passes();
    }

    @Override
    public Executor urgentPasses() {
        return delegate.urgentPasses();
    }

    @Override
    public Executor renewals() {
        return delegate.renewals();
    }

    @Override
    public Executor callbacks() {
        return delegate.callbacks();
    }

    @Override
    public Executor workers() {
        return delegate.workers();
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        return delegate.schedule(task, delay);
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        delegate.sleep(duration);
    }

    @Override
    public boolean await(Future<?> future, Duration timeout) throws InterruptedException {
        return delegate.await(future, timeout);
    }

    @Override
    public void renewalBlocked() {
        delegate.renewalBlocked();
    }

    @Override
    public void renewalUnblocked() {
        delegate.renewalUnblocked();
    }

    @Override
    public void close() {
        // The executors belong to the runtime this one wraps.
    }

    @Override
    public String toString() {
        return delegate + " on " + clock;
    }
}

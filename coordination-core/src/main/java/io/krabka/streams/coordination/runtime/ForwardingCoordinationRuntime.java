package io.krabka.streams.coordination.runtime;

import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;

/**
 * A runtime that hands every call to another: extend it and override what differs (the
 * clock, how timers fire), the way Kafka's {@code ForwardingAdmin} serves an admin client.
 * {@link #close()} closes the delegate; override it where the delegate belongs to another.
 */
public abstract class ForwardingCoordinationRuntime implements CoordinationRuntime {

    private final CoordinationRuntime delegate;

    protected ForwardingCoordinationRuntime(CoordinationRuntime delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The runtime every call goes to unless overridden. */
    protected CoordinationRuntime delegate() {
        return delegate;
    }

    @Override
    public InstantSource clock() {
        return delegate.clock();
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
        delegate.close();
    }
}

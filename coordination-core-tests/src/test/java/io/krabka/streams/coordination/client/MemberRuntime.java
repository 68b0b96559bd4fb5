package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Executor;

/**
 * One member's view of the shared runtime: while frozen (a paused or crashed process),
 * none of its timers, passes, renewals or callbacks start; they run, in order, when it
 * resumes. A task that was already running finishes its step.
 */
final class MemberRuntime implements CoordinationRuntime {
    final ManualRuntime shared;
    final Queue<Runnable> held = new ArrayDeque<>();
    boolean frozen;
    private final Executor passes;
    private final Executor urgentPasses;
    private final Executor renewals;
    private final Executor callbacks;
    private final Executor workers;

    MemberRuntime(ManualRuntime shared) {
        this.shared = shared;
        this.passes = held(shared.passes());
        this.urgentPasses = held(shared.urgentPasses());
        this.renewals = held(shared.renewals());
        this.callbacks = held(shared.callbacks());
        this.workers = held(shared.workers());
    }

    private Executor held(Executor executor) {
        return new Executor() {
            @Override
            public void execute(Runnable task) {
                Executor self = this;
                executor.execute(() -> runOrHold(task, () -> self.execute(task)));
            }
        };
    }

    /** Runs {@code task} now, outside any lock (it may sleep), or keeps {@code later} for the resume. */
    private void runOrHold(Runnable task, Runnable later) {
        synchronized (this) {
            if (frozen) {
                held.add(later);
                return;
            }
        }
        task.run();
    }

    synchronized void freeze() {
        frozen = true;
    }

    void resume() {
        List<Runnable> later;
        synchronized (this) {
            frozen = false;
            later = new ArrayList<>(held);
            held.clear();
        }
        later.forEach(Runnable::run);
    }

    @Override
    public InstantSource clock() {
        return shared.clock();
    }

    @Override
    public long nanoTime() {
        return shared.nanoTime();
    }

    @Override
    public Executor passes() {
        return passes;
    }

    @Override
    public Executor urgentPasses() {
        return urgentPasses;
    }

    @Override
    public Executor renewals() {
        return renewals;
    }

    @Override
    public Executor callbacks() {
        return callbacks;
    }

    @Override
    public Executor workers() {
        return workers;
    }

    @Override
    public boolean await(java.util.concurrent.Future<?> future, Duration timeout) throws InterruptedException {
        return shared.await(future, timeout);
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        return shared.schedule(() -> runOrHold(task, () -> schedule(task, Duration.ZERO)), delay);
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        shared.sleep(duration);
    }

    @Override
    public void renewalBlocked() {
        shared.renewalBlocked();
    }

    @Override
    public void renewalUnblocked() {
        shared.renewalUnblocked();
    }

    @Override
    public void close() {}
}

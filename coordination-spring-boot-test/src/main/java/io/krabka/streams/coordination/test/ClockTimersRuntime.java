package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The test kit's runtime: the starter's threads, and timers that also fire once the lease
 * clock passes their due time ({@link #clockMoved}). A holder looks at its lease clock at
 * least once a second; without this, each step of {@link CoordinationTestSupport#advance}
 * waited in real time for that look before the renewal due at the new instant ran.
 * Timers still fire in real time too, whichever comes first, and once.
 */
final class ClockTimersRuntime implements CoordinationRuntime {

    private final CoordinationRuntime delegate;
    private final ManualClock clock;
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();

    ClockTimersRuntime(CoordinationRuntime delegate, ManualClock clock) {
        this.delegate = delegate;
        this.clock = clock;
    }

    /** Fires, on the worker threads, every pending timer whose due time the lease clock has passed. */
    void clockMoved() {
        Instant now = clock.instant();
        for (Timer timer : pending) {
            if (!timer.due.isAfter(now)) {
                delegate.workers().execute(timer::fire);
            }
        }
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        Timer timer = new Timer(task, dueAfter(delay));
        pending.add(timer);
        timer.realTime(delegate.schedule(timer::fire, delay));
        return timer;
    }

    private Instant dueAfter(Duration delay) {
        try {
            return clock.instant().plus(delay);
        } catch (DateTimeException | ArithmeticException beyondTheClock) {
            return Instant.MAX;
        }
    }

    /** One task, run once: by its real-time timer or by the lease clock, whichever is first. */
    private final class Timer implements Scheduled {
        private final Runnable task;
        private final Instant due;
        private final AtomicBoolean over = new AtomicBoolean();
        private volatile boolean fired;
        private volatile Scheduled realTime;

        Timer(Runnable task, Instant due) {
            this.task = task;
            this.due = due;
        }

        void realTime(Scheduled scheduled) {
            realTime = scheduled;
            if (over.get()) {
                // Cancelled or fired (the clock, or a zero delay) before the real timer was known.
                scheduled.cancel();
            }
        }

        void fire() {
            if (over.compareAndSet(false, true)) {
                fired = true;
                pending.remove(this);
                Scheduled other = realTime;
                if (other != null) {
                    other.cancel();
                }
                task.run();
            }
        }

        @Override
        public void cancel() {
            if (over.compareAndSet(false, true)) {
                pending.remove(this);
                Scheduled other = realTime;
                if (other != null) {
                    other.cancel();
                }
            }
        }

        @Override
        public boolean isDue() {
            Scheduled other = realTime;
            return fired || !due.isAfter(clock.instant()) || other != null && other.isDue();
        }
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

    @Override
    public String toString() {
        return delegate + ", timers also on " + clock;
    }
}

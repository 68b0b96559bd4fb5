package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.runtime.ForwardingCoordinationRuntime;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The test kit's runtime: the starter's threads, and timers that also fire once the lease
 * clock passes their due time ({@link #clockMoved}). A holder looks at its lease clock at
 * least once a second; without this, each step of {@link CoordinationTestSupport#advance}
 * waited in real time for that look before the renewal due at the new instant ran.
 * Timers still fire in real time too, whichever comes first, and once.
 */
final class ClockTimersRuntime extends ForwardingCoordinationRuntime {

    private final ManualClock clock;
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();

    ClockTimersRuntime(CoordinationRuntime delegate, ManualClock clock) {
        super(delegate);
        this.clock = clock;
    }

    /** Fires, on the worker threads, every pending timer whose due time the lease clock has passed. */
    void clockMoved() {
        Instant now = clock.instant();
        for (Timer timer : pending) {
            if (!timer.due.isAfter(now)) {
                delegate().workers().execute(timer::fire);
            }
        }
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        Timer timer = new Timer(task, dueAfter(delay));
        pending.add(timer);
        timer.realTime(delegate().schedule(timer::fire, delay));
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
            if (end()) {
                fired = true;
                task.run();
            }
        }

        @Override
        public void cancel() {
            end();
        }

        /** Ends the timer once, whoever comes first: it is no longer pending, and the real-time timer is cancelled. */
        private boolean end() {
            if (!over.compareAndSet(false, true)) {
                return false;
            }
            pending.remove(this);
            Scheduled other = realTime;
            if (other != null) {
                other.cancel();
            }
            return true;
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
    public String toString() {
        return delegate() + ", timers also on " + clock;
    }
}

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
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The test kit's runtime: the starter's threads, and timers that also fire once the lease
 * clock passes their due time ({@link #clockMoved}). A holder looks at its lease clock at
 * least once a second; without this, each step of {@link CoordinationTestSupport#advance}
 * waited in real time for that look before the renewal due at the new instant ran.
 * Timers still fire in real time too, whichever comes first, and once. A timer counts from
 * the instant its task last read the lease clock: a pass that read it, then armed its next
 * timer after {@link #clockMoved} (the test moved on meanwhile), waited out its whole delay
 * in real time before.
 */
final class ClockTimersRuntime extends ForwardingCoordinationRuntime {

    private final ManualClock clock;
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();
    /** While a task of this runtime's executors runs on a thread: the lease clock's instant it last read. */
    private final ThreadLocal<Instant> seen = new ThreadLocal<>();

    private final InstantSource reading = new InstantSource() {
        @Override
        public Instant instant() {
            Instant now = clock.instant();
            if (seen.get() != null) {
                seen.set(now);
            }
            return now;
        }
    };

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
        Instant now = clock.instant();
        Instant read = seen.get();
        Instant from = read != null && read.isBefore(now) ? read : now;
        Timer timer = new Timer(task, dueAfter(from, delay));
        pending.add(timer);
        timer.realTime(delegate().schedule(timer::fire, delay));
        if (from.isBefore(now) && !timer.due.isAfter(now)) {
            // The clock passed it before it was armed: as clockMoved() would have fired it.
            delegate().workers().execute(timer::fire);
        }
        return timer;
    }

    private static Instant dueAfter(Instant from, Duration delay) {
        try {
            return from.plus(delay);
        } catch (DateTimeException | ArithmeticException beyondTheClock) {
            return Instant.MAX;
        }
    }

    @Override
    public Executor passes() {
        return reading(delegate().passes());
    }

    @Override
    public Executor urgentPasses() {
        return reading(delegate().urgentPasses());
    }

    @Override
    public Executor renewals() {
        return reading(delegate().renewals());
    }

    @Override
    public Executor workers() {
        return reading(delegate().workers());
    }

    /** {@code executor}, its tasks noting the lease clock's instant as they begin and each time they read it. */
    private Executor reading(Executor executor) {
        return task -> executor.execute(() -> {
            Instant outer = seen.get();
            seen.set(clock.instant());
            try {
                task.run();
            } finally {
                if (outer == null) {
                    seen.remove();
                } else {
                    seen.set(outer);
                }
            }
        });
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
        return reading;
    }

    @Override
    public String toString() {
        return delegate() + ", timers also on " + clock;
    }
}
